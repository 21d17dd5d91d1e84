"""Why a score is what it is: a model's worst queries and what one query retrieved (`inspect`), the BM25
analyzer a task was scored with, and whether stored runs still measure the task as it is now."""
