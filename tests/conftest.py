"""Makes the shared test helpers in this folder (``continuous_inputs``) importable from every
test folder: pytest puts the folder of a rootdir-less conftest.py on ``sys.path``."""
