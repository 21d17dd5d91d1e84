"""The raters' files: each rater's append-only grades file (rating_store.py) and its reader (ratings.py), the
reviews of generated questions (review_store.py), agreement between raters (kappa, intervals), import, merge."""
