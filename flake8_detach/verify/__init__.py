"""`flake8-detach verify`: run the fixtures and check that every diagnostic's claim holds at run time.

A diagnostic is a claim about what the code does when it runs ("this `.numpy()` raises
RuntimeError"). This package executes each fixture in a subprocess, once per device, then the
fixer's output the same way, and compares what happened with what the annotations claim.

Modules: :mod:`.fixtures` reads the fixture format, :mod:`.devices` decides which devices run,
:mod:`.runner` is the subprocess side (it alone imports torch for the runs), :mod:`.execution`
drives it, :mod:`.checks` holds the per-rule verdicts and :mod:`.report` renders them.
Nothing here is imported by the linter: torch and numpy stay out of the light core.
"""

INSTALL_HINT = "pip install 'flake8-detach[verify]'"
# MiB of data memory one run may use by default (runner.DEFAULT_MEMORY_LIMIT: the runner, run by
# path, cannot import this package; a test keeps the two equal). Here so the CLI need not import more.
DEFAULT_MEMORY_LIMIT = 4096
