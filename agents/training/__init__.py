"""Training: what ``train.py`` is made of, and the files a run leaves.

``config`` (the settings), ``network`` (the network spec and ``ActorCritic``, the one
owner of the network contract), ``rollout`` (buffers and per-seat GAE), ``ppo`` (the
update), ``opponents`` (who sits opposite the learner), ``warmstart`` (imitation and
``init_from``), ``run`` (a run's state, its checkpoints and signals), ``checkpoint``
(the safetensors + JSON files), ``policy`` (a trained policy as an agent), ``export``
(ONNX).

May import: ``ginenv``, torch, and the top of ``agents`` (``agents.base``,
``agents.extras``, ``agents.stats``, the factory). Never ``agents.play``,
``agents.bridges`` or ``agents.evaluate`` (those build on this room, not it on them).
"""
