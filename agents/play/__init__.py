"""Playing the bot: one game loop (``game``) behind the terminal (``terminal``, run as
``python -m agents.play``) and the web server with its page (``server`` and ``web/``,
run as ``python -m agents.serve``).

May import: ``ginenv``, the ground floor of ``agents`` (``agents.registry``: ``make_agent``, ``SHIPPED``;
``agents.extras``), and trained policies only through the factory. Never
``agents.training`` directly, ``agents.bridges`` or ``agents.evaluate``.
"""
