"""Screening the configuration space (Yilmaz et al. 2007, seed 002): which options matter.

==================  ===============================================================================
module              contents
==================  ===============================================================================
``space``           the configuration space of ``[screen]``: options, levels, constraints parsed
                    with :mod:`ast` and checked (never evaluated as code), how options are applied
``base``            the :class:`~regbench.screening.base.Design` contract, the
                    :class:`~regbench.screening.base.DesignMatrix` record and the registry
``full_factorial``  every configuration (pyDOE3 ``fullfact``)
``fractional``      regular 2^(k-p) fractions from generators, or searched by run size and resolution
``plackett_burman`` Plackett-Burman designs (pyDOE3 ``pbdesign``)
``suite``           screening suites and their validation against the full set
``doptimal``        D-optimal augmentation of a design (coordinate exchange, then row exchange), and
                    the ``doptimal`` design: the same from scratch under the constraints
``words``           generators, defining relation, word-length pattern, resolution, alias chains
``terms``           the effects a design estimates and their aliases
``effects``         effects (eq. 1-3), intervals and t-tests from replication, Lenth's pseudo
                    standard error, half-normal points (eq. 4), Type III sums of squares
``levels``          options of more than two levels: Type III analysis of variance (statsmodels),
                    Benjamini-Hochberg, least-squares level means
``recalibrate``     effects of one version against the previous one's (seed 002 s.4.8)
``campaign``        ``regbench screen``: a design run as a campaign through the run core, then analysed
``alerts``          recalibration as alerts: a significant change of an effect is an alert of the
                    series ``effect:TERM``, recorded by :mod:`regbench.detect.alerts` (told once)
``suite_file``      a suite saved to a TOML file and run by ``regbench run --suite``, one campaign
                    per configuration
==================  ===============================================================================

``space``, ``base``, the designs, ``doptimal``, ``suite``, ``recalibrate``, ``words``, ``terms`` and
``effects`` import numpy, scipy and
pyDOE3 only; ``levels`` imports statsmodels (the ``diagnose`` extra) and pandas; ``campaign`` and
``suite_file`` are orchestrators above :mod:`regbench.run`, and ``alerts`` hands changes to
:mod:`regbench.detect.alerts`.
"""
