"""The benchmark YAML as pure data: the config, its model and experiment entries, what it says of each candidate
(candidate_facts), the judge's and writer's blocks, and `init`'s detection of a folder's format; no model library."""
