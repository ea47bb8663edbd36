"""Facts and results as frozen dataclasses: the vocabulary every layer of imgcheck shares."""
