"""History records to and from an MLflow tracking server (the optional extra `private-mteb[mlflow]`).

Each record (runners/analysis/gate/history.py) becomes one MLflow run named `<candidate> on <task>`:
params  model, label, revision, task, main score, fingerprint and each of its parts (`fp.task.*`,
        `fp.candidate.*`), data revision, corpus size, query count, git commit;
metrics every stored metric's mean and CI bounds (`ndcg_at_10`, `ndcg_at_10_ci_low`, `ndcg_at_10_ci_high`);
tags    `private_mteb.record_id`, `private_mteb.changed` (what changed since the previous record), candidate,
        task, benchmark, git dirty flag;
artifact `private-mteb/record.json` (the whole record: per-query scores and hashes, never text), so
        `history --from-mlflow` rebuilds the same timeline with paired tests; the HTML report when written.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from .store import EnvironmentFault

RECORD_ARTIFACT = "private-mteb/record.json"
TAG_RECORD = "private_mteb.record_id"
_MAX_PARAM = 500  # MLflow keeps long params, but a UI column of 6,000 characters helps nobody


def _client(tracking_uri: str) -> Any:
    # no download bars on stderr (JSON output, CI logs); an unreachable server fails in seconds, not after
    # MLflow's default 7 retries with backoff (the user's own settings win)
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise EnvironmentFault(tracking_uri, "MLflow needs the mlflow extra: pip install 'private-mteb[mlflow]'") from None
    return MlflowClient(tracking_uri=tracking_uri)


@contextmanager
def mlflow_faults(tracking_uri: str, doing: str) -> Iterator[None]:
    """MLflow's errors (server down, bad URI, refused request) as one line naming the URI, exit 2 in the CLI."""
    try:
        yield
    except EnvironmentFault:
        raise
    except Exception as e:  # noqa: BLE001 - MlflowException, requests' errors: all mean "the tracking server said no"
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
        raise EnvironmentFault(tracking_uri, f"MLflow: could not {doing} ({first}): check the tracking URI and "
                                             "that the server is up") from None


def _experiment_id(client: Any, name: str, create: bool) -> str | None:
    exp = client.get_experiment_by_name(name)
    if exp is not None:
        return str(exp.experiment_id)
    return str(client.create_experiment(name)) if create else None


def _flat_params(prefix: str, obj: Any) -> dict[str, str]:
    if isinstance(obj, Mapping):
        out: dict[str, str] = {}
        for k, v in obj.items():
            out.update(_flat_params(f"{prefix}.{k}" if prefix else str(k), v))
        return out
    text = json.dumps(obj, sort_keys=True, default=str) if not isinstance(obj, str) else obj
    return {prefix: text[:_MAX_PARAM]}


def record_params(record: Mapping[str, Any]) -> dict[str, str]:
    cand = record.get("candidate") or {}
    identity = record.get("identity") or {}
    params = {"model": cand.get("name"), "label": cand.get("label"), "revision": cand.get("revision"),
              "task": record.get("task"), "main_score": record.get("main_score"),
              "fingerprint": record.get("fingerprint"), "data_revision": record.get("dataset_revision"),
              "corpus_size": record.get("corpus_size"), "queries": record.get("queries"),
              "git_commit": (record.get("git") or {}).get("commit")}
    out = {k: str(v)[:_MAX_PARAM] for k, v in params.items() if v is not None}
    for part in ("task", "candidate"):
        out.update(_flat_params(f"fp.{part}", identity.get(part) or {}))
    if identity.get("keep_top_k") is not None:
        out["fp.keep_top_k"] = str(identity["keep_top_k"])
    return out


def record_metrics(record: Mapping[str, Any]) -> dict[str, float]:
    out = {}
    for metric, m in (record.get("metrics") or {}).items():
        for key, suffix in (("mean", ""), ("ci_low", "_ci_low"), ("ci_high", "_ci_high")):
            value = m.get(key)
            if isinstance(value, (int, float)) and value == value:  # NaN is not logged
                out[f"{metric}{suffix}"] = float(value)
    return out


def _log_records(records: Sequence[Mapping[str, Any]], tracking_uri: str, experiment: str,
                artifacts: Iterable[Path] = ()) -> list[str]:
    """One MLflow run per record; returns the run ids."""
    from mlflow.entities import Metric, Param, RunTag

    client = _client(tracking_uri)
    exp_id = _experiment_id(client, experiment, create=True)
    files = [Path(a) for a in artifacts]
    run_ids = []
    for record in records:
        cand = record.get("candidate") or {}
        when = int(datetime.fromisoformat(str(record["time"])).timestamp() * 1000)
        tags = {TAG_RECORD: str(record["id"]), "private_mteb.changed": ", ".join(record.get("changed") or []),
                "private_mteb.candidate": str(cand.get("label")), "private_mteb.task": str(record.get("task")),
                "private_mteb.benchmark": str(record.get("benchmark") or ""),
                "private_mteb.git_dirty": str((record.get("git") or {}).get("dirty"))}
        run = client.create_run(exp_id, start_time=when, tags=tags, run_name=f"{cand.get('label')} on {record.get('task')}")
        rid = run.info.run_id
        metrics = [Metric(k, v, when, 0) for k, v in record_metrics(record).items()]
        params = [Param(k, v) for k, v in record_params(record).items()]
        for i in range(0, max(len(metrics), len(params), 1), 100):  # MLflow takes at most 100 params per batch
            client.log_batch(rid, metrics=metrics[i:i + 100], params=params[i:i + 100],
                             tags=[RunTag(k, v) for k, v in tags.items()] if i == 0 else [])
        client.log_text(rid, json.dumps(record, allow_nan=True), RECORD_ARTIFACT)
        for path in files:
            client.log_artifact(rid, str(path), "private-mteb")
        client.set_terminated(rid, end_time=int(time.time() * 1000))
        run_ids.append(rid)
    return run_ids


def _attach_to_latest(tracking_uri: str, experiment: str, pairs: Iterable[tuple[str, str]], path: Path) -> int:
    """Log `path` (e.g. the HTML report) to the newest run of each (candidate label, task); returns how many."""
    client = _client(tracking_uri)
    exp_id = _experiment_id(client, experiment, create=False)
    if exp_id is None:
        return 0
    done = 0
    for label, task in pairs:
        quoted = [str(v).replace("'", "\\'") for v in (label, task)]
        runs = client.search_runs([exp_id], filter_string=f"tags.`private_mteb.candidate` = '{quoted[0]}' and "
                                  f"tags.`private_mteb.task` = '{quoted[1]}'", order_by=["attributes.start_time DESC"],
                                  max_results=1)
        if runs:
            client.log_artifact(runs[0].info.run_id, str(path), "private-mteb")
            done += 1
    return done


def _read_records(tracking_uri: str, experiment: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The history records logged to an experiment (oldest first) and the runs that could not be read back."""
    client = _client(tracking_uri)
    exp_id = _experiment_id(client, experiment, create=False)
    if exp_id is None:
        return [], []
    records, damaged = [], []
    token = None
    with tempfile.TemporaryDirectory() as tmp:
        while True:
            page = client.search_runs([exp_id], filter_string=f"tags.`{TAG_RECORD}` != ''", max_results=1000,
                                      page_token=token)
            for run in page:
                try:
                    local = client.download_artifacts(run.info.run_id, RECORD_ARTIFACT, tmp)
                    record = json.loads(Path(local).read_text(encoding="utf-8"))
                    if not isinstance(record, dict) or "id" not in record:
                        raise ValueError("not a record")
                    records.append(record)
                except Exception as e:  # noqa: BLE001 - one unreadable run must not hide the others
                    damaged.append(f"MLflow run {run.info.run_id}: {RECORD_ARTIFACT} unreadable ({type(e).__name__})")
            token = getattr(page, "token", None)
            if not token:
                break
    records.sort(key=lambda r: (str(r.get("time")), str(r.get("id"))))
    return records, damaged


def log_records(records: Sequence[Mapping[str, Any]], tracking_uri: str, experiment: str,
                artifacts: Iterable[Path] = ()) -> list[str]:
    """One MLflow run per record; returns the run ids."""
    with mlflow_faults(tracking_uri, "log the runs"):
        return _log_records(records, tracking_uri, experiment, artifacts)


def attach_to_latest(tracking_uri: str, experiment: str, pairs: Iterable[tuple[str, str]], path: Path) -> int:
    """Log `path` (e.g. the HTML report) to the newest run of each (candidate label, task); returns how many."""
    with mlflow_faults(tracking_uri, "attach the report"):
        return _attach_to_latest(tracking_uri, experiment, pairs, path)


def read_records(tracking_uri: str, experiment: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The history records logged to an experiment (oldest first) and the runs that could not be read back."""
    with mlflow_faults(tracking_uri, "read the runs back"):
        return _read_records(tracking_uri, experiment)
