"""Bridges to other frameworks: ``openspiel`` (any agent as a ``pyspiel.Bot``, and
OpenSpiel's engine for the evaluator), ``kaggle`` (Kaggle's arena), ``sb3`` (a
Stable-Baselines3 ``VecEnv`` over the batch) and ``rllib`` (Ray RLlib, run as
``python -m agents.rllib``). Each needs its extra; each module names it when missing.

May import: ``ginenv``, the ground floor of ``agents`` (``agents.registry``, ``agents.stats``,
``agents.extras``, ``agents.evaluate``) and ``agents.training``. Never ``agents.play``,
and no bridge imports another but for kaggle (which plays through openspiel).
"""
