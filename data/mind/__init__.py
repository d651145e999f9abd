"""The embedded MIND sample as package data (see README.md in this folder); imported only by importlib.resources."""
