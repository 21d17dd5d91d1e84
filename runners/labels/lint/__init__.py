"""`tasks lint`: the data checks of a collection (duplicates, leaked and near-duplicate questions, unreachable
documents, the declared language), and with a benchmark each candidate's truncation and the pooling gaps."""
