"""Search strategies plugged into mteb's search (hybrid fusion, chunked documents, ANN indexes, a retriever's
loop) and their parameters as plain data; imports results, never config or execution."""
