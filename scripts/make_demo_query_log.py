"""Write data/demo_kb/query_log.csv: the demo's search log, the input of `private-mteb questions sample` (docs/questions.md).

What an internal wiki's search box records: 4,000 searches over the Northwind topics with Zipf-like frequencies,
exact and near duplicates, a count, a timestamp, user and session ids, and, as real logs do, personal data typed
into the box (e-mail addresses, phone numbers, card numbers, IBANs, national id numbers, IP addresses, links with
tokens, long numbers, employee ids) next to clean look-alikes (product codes, wrong checksums, version numbers).
Every value is generated (scripts/query_log_generator.py, seed 0): fictional phone ranges, example.com addresses,
documentation IP ranges, test card prefixes, checksummed numbers computed from random digits; no real person's data.

Deterministic (same seed, same bytes). Run from the checkout:
    python scripts/make_demo_query_log.py
"""

from __future__ import annotations

import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CHECKOUT))  # the generator is scripts/query_log_generator.py beside this script

from scripts.query_log_generator import make_query_log  # noqa: E402

ROWS, SEED = 4000, 0


def main() -> None:
    log = make_query_log(n_rows=ROWS, seed=SEED)
    out = log.write(CHECKOUT / "data" / "demo_kb" / "query_log.csv")
    print(f"{out.name}: {ROWS} searches, {len(log.queries)} distinct clean queries, "
          f"{len(log.sensitive)} planted personal values, {len(log.lookalikes)} look-alikes")


if __name__ == "__main__":
    main()
