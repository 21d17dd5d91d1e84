"""A model's variants stored as mteb experiments of the model (issue 30).

mteb 2.x files a model's variants as experiments: `results/<org__model>/<revision>/experiments/<name>/`, whose
`model_meta.json` holds the base model's name and the `experiment_kwargs` that name the setting; mteb's
`ResultCache.load_results(load_experiments="match_kwargs", experiment_kwargs=...)` selects them. A variant of a
model here is what its results-name tags say (runners/config/model_spec.py writes them):

* `@msl<N>`: max_seq_length N  -> {"max_seq_length": N};
* `@kw<hash8>`: model_kwargs    -> {"model_kwargs": "<hash8>"} (the hash of the kwargs, as in the name);
* `@pr<hash8>`: prompts         -> {"prompts": "<hash8>"} (the hash of the entry's `prompts:`; the texts are in
  the run's identity.json);
* `@onnx`, `@onnx-int8`, `@openvino`, `@openvino-bf16`, `@openvino-int8`: the encode backend
  -> {"backend": ..., "precision": ...};
* `@chunk128-32` (`@chunk800c-100`, `-t1`: title on the first chunk only): documents scored as their best chunk
  -> {"chunking": "tokens", "chunk_size": 128, "overlap": 32, "aggregate": "max"};
* `@hnsw-M16-ef64` (`-efc<N>`), `@ivf64-p8`, `@flat`: an ANN index -> {"ann": "hnsw", "M": 16, "ef_search": 64}.

Composed systems (hybrid, rerank, run files, retrievers) have names of their own and stay plain models. The
results name with its tags stays the key of private-mteb's own sidecars (runs/, candidates.json, history): only the
mteb-format files move. Folders written before (`results/<org__model@onnx-int8>/<revision>/`) are still read, and
`migrate_variant_results` moves them once. Chunking and ANN variants were named `private-mteb/<model><-tag>`
before (`legacy_name`; results/migrate.py moves those, with their sidecars).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

#: results-name tag of an encode backend -> (backend, precision); config/model_spec.py BACKENDS is the writer
#: (tests/test_variants.py checks the two agree)
BACKEND_TAGS = {"onnx": ("onnx", "fp32"), "onnx-int8": ("onnx", "int8"), "openvino": ("openvino", "fp32"),
                "openvino-bf16": ("openvino", "bf16"), "openvino-int8": ("openvino", "int8")}
_CHUNK = re.compile(r"chunk(\d+)(c?)-(\d+)(-t1)?")  # runners/search/chunking.py Chunker.tag, after "chunk"
_HNSW = re.compile(r"hnsw-M(\d+)(?:-efc(\d+))?-ef(\d+)")  # runners/search/params.py IndexParams.tag
_IVF = re.compile(r"ivf(\d+)-p(\d+)")
EXPERIMENTS = "experiments"  # mteb's folder name (mteb.cache.result_cache._EXPERIMENTS_FOLDER_NAME)


#: an encode setting as a results name carries it anywhere: a model's own name (`org/m@msl128@onnx-int8`), an
#: experiment built on it (`org/m@msl4@chunk128-32`) or a hybrid's (`private-mteb/m@msl4+bm25-w0.5`)
_SETTING = re.compile(r"@(msl\d+|kw[0-9a-f]{8}|onnx-int8|onnx|openvino-bf16|openvino-int8|openvino)(?=@|\+|$)")


def setting_text(tag: str) -> str:
    """How a label says an encode-setting tag: `msl128` -> 'max_seq_length 128', `onnx-int8` -> 'onnx int8',
    `kw1a2b3c4d` -> 'model_kwargs 1a2b3c4d' (the hash the results name carries)."""
    if tag.startswith("msl"):
        return f"max_seq_length {tag[3:]}"
    if tag.startswith("kw"):
        return f"model_kwargs {tag[2:]}"
    backend, precision = BACKEND_TAGS[tag]
    return f"{backend} {precision}"


def shown_label(label: str, results_name: str) -> str:
    """THE label every command prints for a candidate (check, stats, history, the report, experiments): its
    label, followed by the encode settings its results name carries that the label does not say.

    Why: a label names a candidate across settings (a config that sets `max_seq_length: 128` on its model keeps
    the label `MiniLM`, so the gate pairs it with what `MiniLM` was in the baseline), but a reader must see that
    the candidate is the 128-token variant: `MiniLM -> MiniLM (max_seq_length 128): FAIL`, and a report with the
    model and its variant shows two different rows. A label that says its setting already (`all-MiniLM-L6-v2@msl128`,
    `MiniLM max_seq_length 128`) is left as it is; labels stay the keys they are (runners/statistics/per_query.py
    `stored_label`)."""
    unsaid = [setting_text(t) for t in _SETTING.findall(results_name)
              if f"@{t}" not in label and setting_text(t) not in label]
    return f"{label} ({', '.join(dict.fromkeys(unsaid))})" if unsaid else label


def search_kwargs(tag: str) -> dict[str, Any] | None:
    """experiment_kwargs of a chunking or ANN tag (`chunk128-32`, `hnsw-M16-ef64`, `ivf64-p8`, `flat`), else None."""
    if m := _CHUNK.fullmatch(tag):
        kw: dict[str, Any] = {"chunking": "chars" if m[2] else "tokens", "chunk_size": int(m[1]),
                              "overlap": int(m[3]), "aggregate": "max"}
        return {**kw, "title": "first"} if m[4] else kw
    if m := _HNSW.fullmatch(tag):
        efc = {"ef_construction": int(m[2])} if m[2] else {}
        return {"ann": "hnsw", "M": int(m[1]), **efc, "ef_search": int(m[3])}
    if m := _IVF.fullmatch(tag):
        return {"ann": "ivf", "nlist": int(m[1]), "nprobe": int(m[2])}
    return {"ann": "flat"} if tag == "flat" else None


def legacy_name(model_name: str) -> str:
    """The results name a variant had before the experiments layout: a chunking/ANN variant
    `org/model[@msl..]@chunk128-32` was `private-mteb/model[@msl..]-chunk128-32`; any other name is unchanged."""
    head, _, last = model_name.rpartition("@")
    if not head or search_kwargs(last) is None or variant_of(model_name) is None:
        return model_name
    return f"private-mteb/{head.split('/')[-1]}-{last}"


def variant_of(model_name: str) -> tuple[str, dict[str, Any]] | None:
    """('org/model', experiment_kwargs) for a variant's results name, None for a plain model or any name whose
    tags are not all variant tags (an '@' in a model's own name)."""
    base, *tags = model_name.split("@")
    if not tags or not base:
        return None
    kwargs: dict[str, Any] = {}
    for tag in tags:
        if m := re.fullmatch(r"msl(\d+)", tag):
            kwargs["max_seq_length"] = int(m[1])
        elif m := re.fullmatch(r"kw([0-9a-f]{8})", tag):
            kwargs["model_kwargs"] = m[1]
        elif m := re.fullmatch(r"pr([0-9a-f]{8})", tag):
            kwargs["prompts"] = m[1]
        elif tag in BACKEND_TAGS:
            kwargs["backend"], kwargs["precision"] = BACKEND_TAGS[tag]
        elif (search := search_kwargs(tag)) is not None:
            kwargs.update(search)
        else:
            return None
    return base, kwargs


def experiment_name(kwargs: dict[str, Any]) -> str:
    """mteb's folder name of an experiment: `key_value` pairs sorted by key, joined by `__` (values here are
    plain ints and strings, so mteb's serialisation is exactly this; tests/test_variants.py compares it with
    `mteb.ModelMeta.experiment_name`)."""
    return "__".join(f"{k}_{kwargs[k]}" for k in sorted(kwargs))


def experiment_meta(meta: dict[str, Any], model_name: str) -> dict[str, Any]:
    """mteb's model_meta.json of a variant: the base model's name, the setting as `experiment_kwargs`."""
    variant = variant_of(model_name)
    if variant is None:
        return meta
    base, kwargs = variant
    return {**meta, "name": base, "experiment_kwargs": {**(meta.get("experiment_kwargs") or {}), **kwargs}}


def migrate_variant_results(results_root: Path) -> list[tuple[Path, Path]]:
    """Move variant folders of the earlier layout (`<root>/<org__model@tag>/<revision>/`) to mteb's experiments
    layout, model_meta.json rewritten; returns (old, new) per moved revision folder. A revision whose new folder
    exists already is left where it is (the newer write wins: readers prefer the new folder)."""
    import json

    moved = []
    if not results_root.is_dir():
        return moved
    for model_dir in sorted(p for p in results_root.iterdir() if p.is_dir() and "@" in p.name):
        variant = variant_of(model_dir.name.replace("__", "/"))
        if variant is None:
            continue
        base, kwargs = variant
        for rev_dir in sorted(p for p in model_dir.iterdir() if p.is_dir()):
            new = results_root / model_dir.name.split("@")[0] / rev_dir.name / EXPERIMENTS / experiment_name(kwargs)
            if new.exists():
                continue
            new.parent.mkdir(parents=True, exist_ok=True)
            os.replace(rev_dir, new)  # one rename: the folder is in the old place or the new one, never half
            meta_path = new / "model_meta.json"
            if meta_path.is_file():  # then the meta names the base model and the setting, as mteb's own experiments
                meta = json.loads(meta_path.read_text(encoding="utf-8"))
                tmp = meta_path.with_name(meta_path.name + ".tmp")
                tmp.write_text(json.dumps({**meta, "name": base, "experiment_kwargs": kwargs}, indent=2), "utf-8")
                os.replace(tmp, meta_path)
            moved.append((rev_dir, new))
        try:
            model_dir.rmdir()
        except OSError:
            pass
    return moved
