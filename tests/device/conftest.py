"""Lets the device tests import their shared harness (devicelib.py): pytest runs with
--import-mode=importlib, which adds no test folder to sys.path."""
import pathlib
import sys

HERE = str(pathlib.Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
