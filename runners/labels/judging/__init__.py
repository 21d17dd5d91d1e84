"""The judging room: a local web app where people grade pooled (question, document) pairs.

Data flows pool/config -> items (items.py) -> the rater's screen (app.py, page.py) -> the rater's own
append-only file (raters/rating_store.py, read back by raters/ratings.py). It reads collections and stored
rankings like the analysis layer and imports no model library; nothing here is reached by `run`.
"""
