"""The judging app of `labels serve`: the blind items a rater grades (pairs, or generated questions to verify), the
plan and live decisive order, the session, the Starlette app and its page; it writes through raters/, runs no model."""
