"""Training: what ``train.py`` is made of, and the files a run leaves.

``loop`` (the PPO loop, ``train(config)``: the command ``train.py`` runs it),
``config`` (the settings), ``network`` (the network spec and ``ActorCritic``, the one
owner of the network contract), ``rollout`` (buffers and per-seat GAE), ``ppo`` (the
update), ``opponents`` (who sits opposite the learner), ``warmstart`` (imitation and
``init_from``), ``run`` (a run's state, its checkpoints and signals), ``checkpoint``
(the safetensors + JSON files), ``policy`` (a trained policy as an agent), ``export``
(ONNX), ``exploit`` (a best response to a frozen bot: how exploitable it is),
``search`` (a policy with search at decision time, the ``+search`` agent spec).

May import: ``ginenv``, torch, and the top of ``agents`` (``agents.base``,
``agents.extras``, ``agents.stats``, ``agents.registry``) and the evaluator (``exploit``
and ``run`` measure with it). Never ``agents.play`` or ``agents.bridges`` (those build on this
room, not it on them).
"""
