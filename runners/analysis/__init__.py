"""analysis layer (see runners/__init__.py): from stored results only, never a model. Rooms by concern, each
importing only the rooms below it (tests/test_layout.py ANALYSIS_ROOMS): stats < gate, diagnose, compare, cost <
page < report; labels (runners/labels/) sits on stats and below the rest. Its own files are the base every room may
import: the error type (analysis_errors.py) and literal text for Markdown and plots (markdown_text.py, plot_text.py).
"""
