"""Cheap iterations first, coordinate descent after: the solvers ``"mu-cd"``
(KL-NMF, normalized NMF) and ``"em-cd"`` (PLSI).

The multiplicative (or EM) iterations cost a fraction of a coordinate
descent sweep and make most of their progress in their first iterations;
the sweeps are what end a fit at the optimum.  A run of such a solver
starts with the cheap iterations and switches, for the rest of the run, to
the sweeps as soon as a cheap iteration lowered the objective by less than
`SWITCH` times its value:

.. math::

    L_{t-1} - L_t < \\mathrm{SWITCH} \\, |L_t|.

Both kinds of iteration never raise the objective, so neither does the run.
"""

# The relative decrease per cheap iteration below which the sweeps take
# over (the choice is measured in ``docs/real_text.md``).
SWITCH = 1e-3


class CheapThenSweeps:
    """The switch of a model whose solver starts cheap (see module).

    The model keeps the objectives its cheap iterations report and whether
    it has switched; a run from a fresh start (``warm=False``) starts cheap
    again.  A model that continues a run (the phases of an alternation, a
    run after a split-merge move) keeps sweeping once it has switched.
    """

    _sweeping = False
    _last_loss = None

    def sweeps_now(self, warm):
        """Whether this iteration is a sweep (called before it)."""
        if not warm:
            self._sweeping, self._last_loss = False, None
        return self._sweeping

    def cheap_done(self, loss):
        """Record the objective a cheap iteration started from."""
        last, self._last_loss = self._last_loss, loss
        if last is not None and last - loss < SWITCH * abs(loss):
            self._sweeping = True
