"""Where results live, and atomic writes.

Layout under a results folder (`results/` by default):
  results/<org__model>/<revision>/<Task>.json, model_meta.json  -- mteb's ResultCache layout, untouched
  results/<org__model>/<revision>/experiments/<name>/...          -- a variant (@msl128, @onnx-int8, @chunk128-32): an experiment
  private-mteb/runs/<org__model>/<revision>/<Task>/<dataset_revision>/per_query_<split>.json
  private-mteb/runs/.../rankings_<split>.json.gz                 -- top-k per query (doc ids + scores)
  private-mteb/runs/.../identity.json                             -- run fingerprint + digests of the files it vouches for
  private-mteb/candidates.json                                    -- display names, public names (a derived index)
  private-mteb/embeddings/...                                     -- embedding cache
  private-mteb/locks/, private-mteb/.staging/                     -- flock files, in-flight mteb output
mteb's loaders only read `results/`, so the sidecars never confuse them.

Environment faults (disk full, no permission, read-only file system, corrupt state file) raise
`EnvironmentFault`: one line naming the path and what to do, exit code 2 in the CLI.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from custom_tasks.errors import CollectionError
from custom_tasks.path_names import control_char, name_problem

from .variants import EXPERIMENTS, experiment_name, legacy_name, variant_of

if TYPE_CHECKING:
    import pandas as pd

SIDE = "private-mteb"
logger = logging.getLogger(__name__)

#: OSError numbers that are the environment's fault (not a bug): told as one line, exit 2
_ENV_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS}


class EnvironmentFault(CollectionError):
    """Disk full, permission denied, read-only or corrupt state: the path and what to do, in one line."""


def fault_errno(err: OSError) -> int | None:
    """The errno of an OSError; numpy's full-disk messages (no errno) count as ENOSPC.

    numpy says '<n> requested and <m> written' after a short write, and 'Not enough free space to write <n>
    bytes after offset <m>' when its preallocation of a large array fails.
    """
    text = str(err)
    if err.errno is None and ((" requested and " in text and text.endswith(" written"))
                              or text.startswith("Not enough free space to write ")):
        return errno.ENOSPC
    return err.errno


def environment_fault(err: OSError, path: Path | str | None = None) -> EnvironmentFault | None:
    """The one-line fault for an OSError the user can fix (None for any other error)."""
    code = fault_errno(err)
    if code not in _ENV_ERRNOS:
        return None
    where = err.filename or path
    if code in (errno.ENOSPC, errno.EDQUOT):
        todo = "the disk is full: free space (or set results_dir/cache_dir elsewhere), then re-run; nothing complete was lost"
    elif code == errno.EROFS:
        todo = "the file system is read-only: point results_dir/cache_dir at a writable folder, then re-run"
    else:
        todo = "permission denied: make the folder writable (or set results_dir/cache_dir elsewhere), then re-run"
    return EnvironmentFault(where, todo)


@contextmanager
def env_faults(path: Path | str | None = None) -> Iterator[None]:
    """Turn disk-full / permission OSErrors raised inside into `EnvironmentFault`."""
    try:
        yield
    except OSError as e:
        fault = environment_fault(e, path)
        if fault is None:
            raise
        raise fault from None


def tmp_path_for(path: Path) -> Path:
    """A temp name next to `path` that says who writes it (so a later run can tell a leftover)."""
    return path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(6).hex()}.tmp")


@lru_cache(maxsize=8192)  # asked for every path of every (candidate, task): a name checked once is checked
def path_part(value: str, what: str) -> str:
    """``value`` when it can be one file or folder name, else a CollectionError (custom_tasks/path_names.py).

    Configs refuse such values when read, naming their line; this stops any that come another way (a
    config built in code, a task name from elsewhere) before anything is written outside the folder."""
    problem = name_problem(str(value))
    if problem:
        shown = ascii(value) if control_char(str(value)) else repr(value)
        raise CollectionError("results path", f"{what} {shown[:80]} cannot name a folder: {problem}")
    return str(value)


def model_dir_name(model_name: str) -> str:
    """mteb's folder name of a model (org/name -> org__name), refused when it cannot name one folder."""
    return path_part(model_name.replace("/", "__").replace(" ", "_"), "model name")


def model_folder(root: Path, model_name: str, revision: str) -> Path:
    """``root/<org__name>/<revision>``: where everything of one model revision goes below a folder."""
    return Path(root) / model_dir_name(model_name) / path_part(revision, "revision")


def result_folder(results_dir: Path, model_name: str, revision: str) -> Path:
    """Where mteb's files of (model, revision) go: `results/<org__model>/<revision>/`, and for a variant
    (`@msl128`, `@onnx-int8`, ...) mteb's experiment folder of its base model (variants.py)."""
    variant = variant_of(model_name)
    if variant is None:
        return model_folder(Path(results_dir) / "results", model_name, revision)
    base, kwargs = variant
    return model_folder(Path(results_dir) / "results", base, revision) / EXPERIMENTS / experiment_name(kwargs)


def task_result_path(results_dir: Path, model_name: str, revision: str, task_name: str, legacy: bool = True) -> Path:
    """mteb's TaskResult JSON of (model, revision, task). `legacy`: a variant stored before the experiments layout
    (`results/<org__model@tag>/...`, a chunking/ANN one under `private-mteb__<model>-<tag>/`, not yet migrated) is
    read where it is (writers pass False)."""
    task_file = f"{path_part(task_name, 'task name')}.json"
    path = result_folder(results_dir, model_name, revision) / task_file
    if legacy and not path.exists() and variant_of(model_name) is not None:
        old = model_folder(Path(results_dir) / "results", legacy_name(model_name), revision) / task_file
        if old.exists():
            return old
    return path


def result_revisions(results_dir: Path, model_name: str) -> list[str]:
    """The revisions with a results folder of this model (for a variant: of its base model, either layout)."""
    roots = [Path(results_dir) / "results" / model_dir_name(legacy_name(model_name))]
    if (variant := variant_of(model_name)) is not None:
        roots.insert(0, Path(results_dir) / "results" / model_dir_name(variant[0]))
    return sorted({p.name for root in roots if root.is_dir() for p in root.iterdir() if p.is_dir()})


def run_dir(results_dir: Path, model_name: str, revision: str, task_name: str, dataset_revision: str) -> Path:
    return (model_folder(Path(results_dir) / SIDE / "runs", model_name, revision) / path_part(task_name, "task name")
            / path_part(dataset_revision, "dataset revision"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temp file in the same folder, fsync, rename: readers see old or new, never half."""
    path = Path(path)
    with env_faults(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


#: gzip level of compressed sidecars (rankings): level 1 is ~10x faster than gzip's default 9 and ~8% larger
#: (200k documents x 500 queries x 1000 ranked: 0.6 s / 7.1 MB vs 7.0 s / 6.5 MB); mtime=0 keeps the bytes reproducible
GZIP_LEVEL = 1


def atomic_write_json(path: Path, obj: Any, compress: bool = False) -> None:
    data = json.dumps(obj, indent=None if compress else 1, sort_keys=False).encode()
    atomic_write_bytes(path, gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0) if compress else data)


def read_json(path: Path) -> Any:
    path = Path(path)
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def existing_dataset_revision(path: Path) -> str | None:
    """dataset_revision recorded in an mteb TaskResult JSON (None if absent or unreadable)."""
    try:
        return read_json(path).get("dataset_revision")
    except (OSError, ValueError):
        return None


def candidates_path(results_dir: Path) -> Path:
    return Path(results_dir) / SIDE / "candidates.json"


def save_candidate(results_dir: Path, model_name: str, info: dict[str, Any]) -> None:
    """Record a candidate's label/revision/public name; writes only on change (a read-only complete folder works).

    candidates.json is an index derived from benchmark configs: a corrupt one is set aside
    (`candidates.json.corrupt`) with a warning and rebuilt, instead of stopping the run.
    """
    path = candidates_path(results_dir)
    try:
        data = _read_candidates(path)
    except EnvironmentFault as fault:
        logger.warning("%s; rebuilding it (the old file is kept as %s.corrupt)", fault, path.name)
        with env_faults(path):
            os.replace(path, path.with_name(path.name + ".corrupt"))
        data = {}
    merged = {**data.get(model_name, {}), **info}
    if data.get(model_name) == merged:
        return
    data[model_name] = merged
    atomic_write_json(path, data)


def _read_candidates(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    try:
        data = read_json(path)
    except (ValueError, UnicodeDecodeError) as e:
        raise EnvironmentFault(path, f"corrupt ({type(e).__name__}): delete it and re-run `private-mteb run` "
                                     "to rebuild it (it only holds labels and public names)") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise EnvironmentFault(path, "corrupt (not a mapping of model name -> info): delete it and re-run "
                                     "`private-mteb run` to rebuild it")
    return data


def load_candidates(results_dir: Path) -> dict[str, dict[str, Any]]:
    """Labels, revisions and public names of the candidates run into this folder ({} if none)."""
    return _read_candidates(candidates_path(results_dir))


# ---------------------------------------------------------------- run identity on disk
def identity_path(run_folder: Path) -> Path:
    return Path(run_folder) / "identity.json"


def read_identity(run_folder: Path) -> dict[str, Any] | None:
    """The identity record of a run folder (None if absent or unreadable: then the run is not complete)."""
    try:
        data = read_json(identity_path(run_folder))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def file_digest(path: Path) -> str | None:
    """sha256 of a file's bytes (None if it cannot be read)."""
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    except OSError:
        return None


def per_query_path(folder: Path, split: str) -> Path:
    """A run folder's per-query file for ``split``: ``per_query_<split>.json`` as `run` writes it, or the gzip copy
    ``per_query_<split>.json.gz`` a baseline keeps (`baseline save`: a sixth of the size); the plain name when
    neither exists (the caller says it is missing)."""
    plain = Path(folder) / f"per_query_{split}.json"
    packed = plain.with_name(plain.name + ".gz")
    return packed if not plain.exists() and packed.exists() else plain


def read_per_query(path: Path) -> Any:
    """A per-query file as `run` wrote it, whichever form it is stored in (results/per_query_pack.py)."""
    from .per_query_pack import unpack

    return unpack(read_json(path))


def find_run(results_dir: Path, model_name: str, task_name: str, revision: str | None = None) -> Path | None:
    """The run folder matching the dataset revision in the current TaskResult JSON."""
    revisions = [revision] if revision else result_revisions(results_dir, model_name)
    for rev in revisions:
        result = task_result_path(results_dir, model_name, rev, task_name)
        ds_rev = existing_dataset_revision(result)
        if ds_rev:
            for name in dict.fromkeys((model_name, legacy_name(model_name))):  # a chunk/ANN run not yet migrated
                if (folder := run_dir(results_dir, name, rev, task_name, ds_rev)).is_dir():
                    return folder
    return None


def load_per_query(results_dir: Path, model_name: str, task_name: str, metric: str = "ndcg_at_10",
                   split: str = "test", revision: str | None = None, subset: str = "default") -> pd.Series:
    """Per-query scores of one model on one task, indexed by query id."""
    import pandas as pd  # lazy: the analysis commands read per-query files as dicts (fast start-up)

    folder = find_run(results_dir, model_name, task_name, revision)
    if folder is None:
        raise FileNotFoundError(f"no per-query scores for model '{model_name}' on task '{task_name}' in {results_dir}")
    data = read_per_query(per_query_path(folder, split))
    scores = data["subsets"][subset][metric]
    return pd.Series(scores, name=model_name, dtype=float).sort_index()


def load_rankings(results_dir: Path, model_name: str, task_name: str, split: str = "test",
                  revision: str | None = None, subset: str = "default") -> dict[str, dict[str, float]]:
    folder = find_run(results_dir, model_name, task_name, revision)
    if folder is None:
        raise FileNotFoundError(f"no rankings for model '{model_name}' on task '{task_name}' in {results_dir}")
    return read_json(folder / f"rankings_{split}.json.gz")["subsets"][subset]


def list_runs(results_dir: Path) -> pd.DataFrame:
    """One row per (model, revision, task) that has per-query scores."""
    import pandas as pd  # lazy, as in load_per_query

    rows = []
    base = Path(results_dir) / SIDE / "runs"
    for pq in sorted([*base.glob("*/*/*/*/per_query_*.json"), *base.glob("*/*/*/*/per_query_*.json.gz")]):
        ds_rev, task, rev = pq.parent.name, pq.parent.parent.name, pq.parent.parent.parent.name
        info = read_per_query(pq)
        rows.append({"model": info["model"], "revision": rev, "task": task, "dataset_revision": ds_rev,
                     "split": info["split"], "path": str(pq.parent)})
    return pd.DataFrame(rows)


def load_ann_agreement(results_dir: Path, model_name: str, task_name: str, split: str = "test",
                       revision: str | None = None, subset: str = "default") -> dict[str, Any] | None:
    """The agreement record of one ANN run (None when the run or its sidecar is missing)."""
    folder = find_run(results_dir, model_name, task_name, revision)
    path = folder / f"ann_agreement_{split}.json" if folder is not None else None
    if path is None or not path.exists():
        return None
    return read_json(path)["subsets"].get(subset)
