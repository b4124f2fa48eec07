"""unittest suite for qimeng_emitters (run with unittest discover -s tests -t .)."""
