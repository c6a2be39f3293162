"""The training demo: `python -m demo.train` (see demo/train.py)."""
