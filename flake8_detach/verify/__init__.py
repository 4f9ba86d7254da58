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
