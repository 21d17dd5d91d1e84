"""Chunking and ANN results of the earlier naming moved, once, to mteb's experiments of their base model (issue 30).

Before, a chunking or ANN setting was a model of its own, `private-mteb/<model>-chunk128-32`, whose name lacks the
base model's organisation; now it is `<org/model>@chunk128-32`, an experiment of the model (variants.py). The old
name is derived from the new one (`legacy_name`), so the config's candidates say what to move: no index is needed.
Moved per (name, revision), nothing re-computed:

* mteb's files `results/private-mteb__<model>-<tag>/<rev>/` -> `results/<org__model>/<rev>/experiments/<setting>/`,
  model_meta.json naming the base model and the setting;
* private-mteb's sidecars `private-mteb/runs/private-mteb__<model>-<tag>/<rev>/` -> `.../runs/<org__model@tag>/<rev>/`,
  each file's model name, the identity's candidate name, its fingerprint and the digests rewritten, so the run is
  complete under its new name (stored_runs.py `why_stale`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from .fingerprints import canonical_hash
from .store import SIDE, atomic_write_json, file_digest, identity_path, model_dir_name, read_json, result_folder
from .variants import experiment_meta, legacy_name


def _renamed_sidecars(folder: Path, old: str, new: str) -> None:
    """Rewrite one dataset-revision run folder for the new name (in place, before the folder is renamed)."""
    ident = read_json(identity_path(folder))
    cand = ident.get("candidate") or {}
    if cand.get("name") == old:
        cand["name"] = new
    body = {k: v for k, v in ident.items() if k not in ("fingerprint", "files")}
    fingerprint = canonical_hash(body)  # identity.run_identity: the hash of everything but itself and the digests
    digests = dict(ident.get("files") or {})
    for path in sorted(folder.iterdir()):
        if not path.name.endswith((".json", ".json.gz")) or path.name == "identity.json":
            continue
        data = read_json(path)
        if isinstance(data, dict) and data.get("model") == old:
            data["model"] = new
            if "fingerprint" in data:
                data["fingerprint"] = fingerprint
            atomic_write_json(path, data, compress=path.suffix == ".gz")
            if path.name in digests:
                digests[path.name] = file_digest(path)
    atomic_write_json(identity_path(folder), {**body, "fingerprint": fingerprint, "files": digests})


def migrate_search_variants(results_dir: Path, names: Iterable[str]) -> list[tuple[str, str]]:
    """Move the earlier-named results of these chunking/ANN candidates; returns (old, new) per moved revision.
    A revision whose new folder exists already stays where it is (the newer write wins: readers prefer it)."""
    results_dir = Path(results_dir)
    moved: list[tuple[str, str]] = []
    for new in dict.fromkeys(names):
        old = legacy_name(new)
        if old == new:
            continue
        old_results = results_dir / "results" / model_dir_name(old)
        old_runs = results_dir / SIDE / "runs" / model_dir_name(old)
        revisions = {p.name for root in (old_results, old_runs) if root.is_dir() for p in root.iterdir() if p.is_dir()}
        for rev in sorted(revisions):
            target, runs_target = result_folder(results_dir, new, rev), results_dir / SIDE / "runs" / model_dir_name(new) / rev
            if target.exists() or runs_target.exists():
                continue
            if (old_runs / rev).is_dir():  # sidecars first: a TaskResult without its run is re-run, never wrong
                for folder in sorted(p for p in (old_runs / rev).glob("*/*") if identity_path(p).is_file()):
                    _renamed_sidecars(folder, old, new)
                runs_target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(old_runs / rev, runs_target)
            if (old_results / rev).is_dir():
                meta_path = old_results / rev / "model_meta.json"
                if meta_path.is_file():
                    meta: dict[str, Any] = {**read_json(meta_path), "name": new, "adapted_from": None}
                    atomic_write_json(meta_path, experiment_meta(meta, new))
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(old_results / rev, target)
            moved.append((old, new))
        for root in (old_results, old_runs):
            try:
                root.rmdir()
            except OSError:
                pass
    return moved
