"""analysis layer (see runners/__init__.py): from stored results only, never a model. Rooms by concern, each
importing only the rooms below it (tests/test_layout.py ANALYSIS_ROOMS): gate, diagnose, compare, cost < page <
report; all of them stand on the statistics core (runners/statistics/) and on labels (runners/labels/). Its own files
are the base every room may import: literal text for Markdown and plots (markdown_text.py, plot_text.py).
"""
