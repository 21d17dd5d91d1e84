"""What mteb 2.x accepts in a task, as static data, so a task YAML is checked without `import mteb`.

`import mteb` costs seconds (torch), and `tasks validate` / `tasks list` / result loading read every task
YAML. Without these checks a typo such as ``main_score: ndcg_at_11`` passes validation and `run` dies with a
KeyError after encoding the whole corpus. tests/test_task.py compares every list here with mteb itself (and
the score names with the keys of a real mteb result), so an mteb upgrade that changes one fails a test, not a
user's run.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

#: mteb's ``AbsTaskRetrieval.k_values``: the cut-offs every @k metric is reported at
DEFAULT_K_VALUES: tuple[int, ...] = (1, 3, 5, 10, 20, 100, 1000)

#: metric families mteb reports as ``<family>_at_<k>`` (make_score_dict in mteb/_evaluators/retrieval_metrics.py)
AT_K_FAMILIES: tuple[str, ...] = ("ndcg", "map", "recall", "precision", "mrr", "hit_rate")
#: families that also get ``nauc_<family>_at_<k>_<confidence>`` (abstention nAUC, one per confidence function)
NAUC_FAMILIES: tuple[str, ...] = ("ndcg", "map", "recall", "precision", "mrr")
NAUC_CONFIDENCES: tuple[str, ...] = ("max", "std", "diff1")
#: scores that do not depend on k (``accuracy`` is mteb's name for recall_at_1, so k = 1 must be present)
PLAIN_SCORES: tuple[str, ...] = ("accuracy",)

#: mteb.types.Licenses (a URL is accepted as well)
LICENSES: tuple[str, ...] = (
    "not specified", "mit", "cc-by-2.0", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0",
    "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0", "cc-by-nc-nd-4.0", "cc-by-nd-4.0",
    "openrail", "openrail++", "odc-by", "afl-3.0", "apache-2.0", "cc-by-nd-2.1-jp", "cc0-1.0", "bsd-3-clause",
    "gpl-3.0", "lgpl", "lgpl-3.0", "cdla-sharing-1.0", "mpl-2.0", "msr-la-nc", "multiple", "gemma", "eupl-1.2",
    "openmdw-1.1",
)

#: mteb.abstasks.task_metadata.TaskDomain
DOMAINS: tuple[str, ...] = (
    "Academic", "Blog", "Constructed", "Encyclopaedic", "Engineering", "Fiction", "Government", "Legal",
    "Medical", "News", "Non-fiction", "Poetry", "Religious", "Reviews", "Scene", "Social", "Spoken", "Subtitles",
    "Web", "Written", "Programming", "Chemistry", "Financial", "Entertainment", "E-commerce", "AudioScene",
    "Speech", "Music", "Bioacoustics", "Sport", "Activity", "Instructional", "Egocentric", "Nature", "Animation",
    "Robotics",
)

_AT_K = re.compile(r"^(?P<family>.+?)_(?:at|cut)_(?P<k>\d+)(?P<suffix>_[a-z0-9]+)?$")
#: other spellings of a family (mteb's display names, pytrec_eval's names)
_ALIASES = {"p": "precision", "r": "recall", "success": "hit_rate", "hitrate": "hit_rate", "hits": "hit_rate"}


def retrieval_score_names(k_values: Sequence[int] = DEFAULT_K_VALUES) -> list[str]:
    """Every score name mteb's retrieval evaluation reports for these k-values: the valid ``main_score``s."""
    names = [f"{family}_at_{k}" for k in k_values for family in AT_K_FAMILIES]
    names += PLAIN_SCORES
    names += [f"nauc_{family}_at_{k}_{conf}" for family in NAUC_FAMILIES for k in k_values
              for conf in NAUC_CONFIDENCES]
    return names


def closest(value: str, choices: Iterable[str], cutoff: float = 0.0) -> str:
    """The choice most similar to ``value`` (difflib), for a "did you mean" hint; '' when none is close enough."""
    return (difflib.get_close_matches(value, list(choices), n=1, cutoff=cutoff) or [""])[0]


def closest_score_name(value: str, k_values: Sequence[int] = DEFAULT_K_VALUES) -> str:
    """The valid score name a typo most likely meant.

    A known metric at a k that is not computed (``ndcg_at_11``) means the same metric at the nearest k
    (``ndcg_at_10``), which plain string similarity would miss (it says ``ndcg_at_1``); ``NDCG@10`` and
    pytrec_eval's ``ndcg_cut_10`` are read as ``ndcg_at_10``; anything else: difflib.
    """
    names = retrieval_score_names(k_values)
    norm = value.strip().lower().replace("@", "_at_").replace("-", "_").replace(" ", "_")
    m = _AT_K.match(norm)
    if m and k_values:
        k = min(k_values, key=lambda c: (abs(c - int(m["k"])), c))
        guess = f"{_ALIASES.get(m['family'], m['family'])}_at_{k}{m['suffix'] or ''}"
        if guess in names:
            return guess
    return closest(norm, names)
