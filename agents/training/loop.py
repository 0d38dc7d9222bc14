"""The PPO loop, top to bottom: ``train(config)`` and its phases (warm start, rollout,
advantages and update, league exploiters, logging and evaluation, checkpoints), as
``train.py`` runs them; the script is the command around it. It lives in the package so
that the league's exploiters and the exploitability tool (``agents.training.exploit``)
call the same trainer without importing the script (the script uses the package, never
the other way round)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import torch

from agents.training import opponents as O
from agents.training import ppo, rollout, warmstart
from agents.training.config import Config, make_config, set_item
from agents.training.run import (
    Run,
    build_run,
    check_writable,
    checkpoint,
    evaluate,
    log_eval,
    log_path,
    open_logs,
    plan_run,
    say,
    stopped,
)
from agents.training.stopping import StopSignal
from agents.training.warmstart import init_sets

#: The recipes, package data (``agents/configs``; in the clone ``configs/`` points there).
CONFIGS = Path(__file__).resolve().parents[1] / "configs"
DEFAULT_CONFIG = CONFIGS / "default.yaml"


def warm_start(run: Run, saved, stop: StopSignal) -> warmstart.Imitation | None:
    """Imitate ``bc_teacher`` before PPO (going on from a saved unfinished imitation);
    returns the imitation, unfinished if ``stop`` came first."""
    c = run.c
    if run.progress["update"] > 0 or not (c.bc_teacher and c.bc_decisions):
        return None
    if saved is None and run.progress.get("imitated"):
        return None  # finished before the checkpoint this run resumed from
    imitation = warmstart.Imitation(run.model, c, run.device)
    if saved is not None:
        imitation.restore(*saved)
    imitation.run(run.rng, stop.is_set, log=run.writer.add_scalar, say=run.say)
    if imitation.done:
        run.progress["imitated"] = True
        if c.eval_every:
            ev = evaluate(run.model, c, run.rules, 0, run.opponents.frozen)
            run.say("after imitation: " + log_eval(run, ev))
    return imitation


def collect(run: Run):
    """The rollout: ``num_steps`` moves of every game; the learning rate annealed first."""
    c, p = run.c, run.progress
    if c.anneal_lr:
        run.optimizer.param_groups[0]["lr"] = c.learning_rate * (1.0 - p["update"] / c.num_updates)
    t0 = time.time()
    buf, learner_decisions = rollout.collect(
        run.env, run.model, run.opponents, run.rng, c.num_steps, run.device, run.split
    )
    p["decisions"] += c.batch_size
    p["learner_decisions"] += learner_decisions
    return buf, {"charts/rollout_seconds": time.time() - t0}


def learn(run: Run, buf, timing: dict) -> dict:
    """Advantages (per-seat GAE), the PPO update, and a snapshot for the pool when due.
    Returns the update's statistics."""
    c, p = run.c, run.progress
    frac = p["update"] / c.num_updates
    t1 = time.time()
    game_reward = float(buf.rewards[buf.valid].mean())  # the game's, before any shaping
    rollout.table_rewards(buf, c.players)
    rollout.penalize_undercuts(buf, c.undercut_penalty, c.reward_scale)
    rollout.shape_rewards(buf, c.gamma, c.deadwood_shaping, c.reward_scale, c.opponent_deadwood_shaping)
    adv, returns = rollout.advantages(buf, c.gamma, c.gae_lambda)
    stats = ppo.update(
        run.model,
        run.optimizer,
        run.clip_groups,
        ppo.flatten(buf, adv, returns, run.device, opponent_deadwood=run.model.deadwood_head is not None),
        c,
        c.ent_coef + (c.ent_coef_final - c.ent_coef) * frac,
        critic_only=p["update"] < c.critic_warmup_updates,
        knock_ent_coef=knock_bonus(c, p["update"]),
        rng=run.rng,
        device=run.device,
        split=run.split,
    )
    p["update"] += 1
    if p["update"] % c.snapshot_every == 0:
        O.add_snapshot(run.opponents, run.model, c.pool_size, run.device)
    seconds = timing["charts/rollout_seconds"] + time.time() - t1
    return (
        stats
        | timing
        | {
            "charts/update_seconds": time.time() - t1,
            "charts/decisions_per_second": c.batch_size / max(seconds, 1e-9),
            "charts/learning_rate": run.optimizer.param_groups[0]["lr"],
            "charts/mean_reward_per_decision": game_reward,
        }
        | league_stats(run.opponents)
        | rollout.hand_stats(buf)  # how the hands ended, who ended them, their length, knocks
    )


def knock_bonus(c, update: int) -> float:
    """``knock_ent_coef`` at ``update``: falling linearly to 0 over the updates of
    ``knock_ent_decisions`` (0: over the whole run, as the other schedules)."""
    horizon = -(-c.knock_ent_decisions // c.batch_size) if c.knock_ent_decisions else c.num_updates
    return c.knock_ent_coef * max(0.0, 1.0 - update / horizon)


def league_stats(opp: O.Opponents) -> dict:
    """The learner's recent share of episodes won against each opponent it meets (what
    PFSP weighs by)."""
    return {
        f"league/win_rate_{kind}": float(opp.win_rate[k])
        for k, kind in enumerate(O.OPPONENT_KINDS)
        if k != O.SELF and opp.mix[k] > 0
    }


def league(run: Run, stop: StopSignal) -> bool:
    """Before the next rollout, when due: a main exploiter (every ``exploiter_every``
    updates), then a league exploiter (every ``league_exploiter_every``), each trained by
    this trainer and added to the league's exploiter pool. Their runs live in
    ``<run>/league/``. They share the run's ``stop``: Ctrl-C stops one at its next update
    boundary and returns False (the next resume trains it again, alike: its seed is the
    run's plus the update)."""
    c, p = run.c, run.progress
    u = p["update"]
    for against, every, at in (
        ("main", c.exploiter_every, "exploiter_at"),
        ("league", c.league_exploiter_every, "league_exploiter_at"),
    ):
        if not every or u == 0 or u % every or p[at] == u:
            continue
        if not train_exploiter(run, stop, against):
            return False
        p[at] = u
    return True


def train_exploiter(run: Run, stop: StopSignal, against: str) -> bool:
    """Train one exploiter of the learner as it is now (``against="main"``: a best response
    to it alone) or of the whole league (``"league"``: the learner, its snapshot pool and
    the exploiters so far, as frozen checkpoints sharing the episodes of the learner's
    ``self``, ``snapshot`` and ``exploiter`` shares, PFSP-weighted, and the learner's
    baselines at their shares); it joins the exploiter pool. False if stopped."""
    from agents.training.checkpoint import save_checkpoint
    from agents.training.policy import load_policy

    c, u = run.c, run.progress["update"]
    league_dir = run.run_dir / "league"

    def saved(net, path):
        meta = {"network": net.spec.to_dict(), "rules": run.rules.to_dict(), "config": {}, "update": u}
        return str(save_checkpoint(path, u, net, meta))

    target = saved(run.model, league_dir / f"learner_{u}")
    keys = ("num_envs", "num_steps", "num_minibatches", "update_epochs", "torch_threads", "device", "mode", "rules")
    keys += ("hidden_sizes", "activation", "architecture", "privileged_critic", "log_dir", "gamma", "gae_lambda")
    keys += ("knock_ent_coef", "knock_ent_decisions")  # the run's knock bonus, not the default's
    if c.exploiter_from == "learner":
        keys += ("learning_rate", "ent_coef", "ent_coef_final")
    sets = [set_item(k, getattr(c, k)) for k in keys]
    sets += [f"checkpoint_dir={league_dir}", "eval_every=0", "bc_decisions=0", "critic_warmup_updates=0"]
    name, seed = f"{c.run_name}_exploiter_{u}", c.seed + u
    if against == "league":
        name, seed = f"{c.run_name}_league_exploiter_{u}", c.seed + u + (1 << 40)
        members = [target]
        members += [
            saved(net, league_dir / f"league_{u}" / f"snapshot_{k}") for k, net in enumerate(run.opponents.pool)
        ]
        members += [
            saved(net, league_dir / f"league_{u}" / f"exploiter_{k}") for k, net in enumerate(run.opponents.exploiters)
        ]
        baselines = {k: v for k, v in c.opponents.items() if k in O.BASELINES and v > 0}
        league_share = sum(c.opponents.get(k, 0.0) for k in ("self", "snapshot", "exploiter"))
        mix = {"frozen": league_share or sum(baselines.values()) or 1.0} | baselines  # never without the league
        sets += [set_item("frozen", members), set_item("opponents", mix), f"pfsp={c.pfsp or 1.0}"]
    sets.append(f"seed={seed % (1 << 63)}")  # a seed the config takes, whatever the run's
    init_from = target if c.exploiter_from == "learner" else None
    sub = exploiter_config(target, c.exploiter_decisions, init_from, sets, run_name=name)
    torch_state = torch.get_rng_state()  # the learner's random stream goes on as if nothing ran
    run.say(
        f"league: training a{' league' if against == 'league' else 'n'} exploiter of update {u} "
        f"({c.exploiter_decisions:,} decisions)"
    )
    last = train(sub, quiet=True, stop=stop)
    torch.set_rng_state(torch_state)
    torch.set_num_threads(c.torch_threads)
    if stop.is_set():  # it stopped early (or at its end, which a resume redoes alike)
        return False
    O.add_exploiter(run.opponents, load_policy(last).model.to(run.device), c.exploiter_pool_size)
    return True


def log_update(run: Run, stats: dict) -> str:
    """TensorBoard scalars, and an evaluation when due; returns the progress line."""
    c, p = run.c, run.progress
    for k, v in stats.items():
        run.writer.add_scalar(k, v, p["decisions"])
    line = (
        f"update {p['update']}/{c.num_updates}  decisions {p['decisions'] / 1e6:.2f}M  "
        f"{stats['charts/decisions_per_second'] / 1e3:.1f}k dec/s  entropy {stats['losses/entropy']:.2f}  "
        f"value loss {stats['losses/value_loss']:.4f}"
    )
    if c.eval_every and (p["update"] % c.eval_every == 0 or p["update"] == c.num_updates):
        line += "  " + log_eval(run, evaluate(run.model, c, run.rules, p["update"], run.opponents.frozen))
    return line


def minutes(seconds: float) -> str:
    """``h:mm:ss`` (or ``m:ss``) of a duration."""
    seconds = max(0, round(seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def clock(run: Run, end: int, deadline: float | None) -> str:
    """The time so far (the run's updates, resumes included) and the time left to
    update ``end`` at the pace so far; with ``--stop-after-minutes``, when it stops."""
    p = run.progress
    done, elapsed = p["update"], p["seconds"]
    left = elapsed / max(done, 1) * (end - done)
    out = f"{minutes(elapsed)} elapsed, ~{minutes(left)} left"
    if deadline is not None and deadline - time.time() < left:
        out += f" (stops in ~{minutes(max(0.0, deadline - time.time()))}: --stop-after-minutes)"
    return out


def exploiter_config(target: str, decisions: int, init_from: str | None, sets=(), run_name: str = ""):
    """The trainer's config for a best response to ``target``: every episode against it,
    evaluations against it, the network of ``init_from`` when one is given."""
    base = [f"frozen={target}", "opponents={frozen: 1.0}", "eval_opponents=[frozen]", "exp_name=exploit"]
    base.append(f"total_decisions={decisions}")
    if init_from:
        base += init_sets(init_from)
    if run_name:
        base.append(f"run_name={run_name}")
    return make_config(config_file=DEFAULT_CONFIG, sets=[*base, *sets])


def train(
    config: Config | None = None,
    resume=None,
    resume_overrides=(),
    quiet: bool = False,
    stop_after: int | None = None,
    time_limit: float | None = None,
    stop: StopSignal | None = None,
    tensorboard: tuple | None = None,
    resume_hint=None,
    **overrides,
) -> Path:
    """Train to the end, or for ``stop_after`` more updates, or until the first update
    that ends ``time_limit`` seconds or more after the start, or until SIGINT / SIGTERM;
    then checkpoint (a run stopped early continues with ``resume``). Returns the last
    checkpoint. ``stop``: the signals' catcher to share (a league's exploiter runs with its
    run's), else one of its own. ``tensorboard``: (directory, first step) of the log to
    write into instead of ``log_dir/run_name`` (a stage of a stages run), and
    ``resume_hint`` what its messages tell to ``--resume`` (the stages run)."""
    own = stop is None  # a league's exploiter shares its run's catcher; the command makes its own first
    stop = StopSignal() if own else stop  # Ctrl-C or SIGTERM: checkpoint at the next boundary, then stop
    try:
        # --------------------------------------------- config, outputs checked first
        c, step_dir, run_dir = plan_run(config, resume, resume_overrides, overrides)
        created = [d for d in (run_dir, log_path(c, tensorboard)) if not d.exists()]  # gone again if nothing is
        check_writable(run_dir, "checkpoint_dir")
        check_writable(log_path(c, tensorboard), "log_dir")
        if stop.is_set():
            return stopped_at_start(stop, step_dir, run_dir, hint=resume_hint, created=created)
        # ------------------------------------- seeding, envs, agent, opponents
        run, saved_imitation = build_run(c, run_dir, step_dir, quiet)
    except BaseException:
        if own:
            stop.restore()
        raise
    resumed_at = run.progress["update"]
    run.resume_hint = resume_hint
    try:
        if stop.is_set():  # before anything is written
            return stopped_at_start(stop, step_dir, run_dir, run.say, hint=resume_hint, created=created)
        open_logs(run, fresh=step_dir is None, tensorboard=tensorboard)
        if step_dir is not None:
            p = run.progress
            run.say(f"resuming from {step_dir} (update {p['update']} of {c.num_updates}, {p['decisions']:,} decisions)")
        run.split = ppo.SplitWorker.for_config(c, run.device)  # the update's critic on a second thread
        # ---------------------------------------------------------- warm start
        imitation = warm_start(run, saved_imitation, stop)
        if stop.is_set():
            if imitation is None:  # no imitation ran: nothing new to save
                run.writer.close()
                run.writer = None
                return stopped_at_start(stop, step_dir, run_dir, run.say, hint=resume_hint, created=created)
            why = f"on {signal.Signals(stop.signum).name} while imitating"
            return stopped(run, checkpoint(run, imitation), why)
        # ------------------------------------------------------------ the loop
        start, path = time.time(), None
        end = c.num_updates if stop_after is None else min(c.num_updates, resumed_at + stop_after)
        while run.progress["update"] < end:
            t = time.time()
            if not league(run, stop):  # an exploiter of the learner as it is now, when due
                return stopped(run, checkpoint(run), "while training an exploiter")
            buf, timing = collect(run)  # rollout
            stats = learn(run, buf, timing)  # advantages, PPO update, snapshot
            line = log_update(run, stats)  # logging, evaluation
            run.progress["seconds"] += time.time() - t
            run.say(line + "  " + clock(run, end, None if time_limit is None else start + time_limit))
            # ----------------------------------------------------- checkpointing
            update = run.progress["update"]
            out_of_time = time_limit is not None and time.time() - start >= time_limit
            if update % c.checkpoint_every == 0 or update == end or out_of_time or stop.is_set():
                path = checkpoint(run)
            if out_of_time or stop.is_set():
                why = f"after {time_limit / 60:g} minutes" if out_of_time else f"on {signal.Signals(stop.signum).name}"
                return stopped(run, path, why)
    finally:
        if own:
            stop.restore()
        if run.writer is not None:
            run.writer.close()
        if run.split is not None:
            run.split.close()
    if path is None and step_dir is not None and run.progress["update"] == resumed_at:
        run.say(f"nothing to do: {step_dir} is at update {resumed_at} of {c.num_updates}")
        return step_dir  # a resume with nothing to do changes nothing
    return path if path is not None else checkpoint(run)


def stopped_at_start(stop: StopSignal, step_dir, run_dir: Path, speak=say, hint=None, created=()):
    """A signal before the first update: nothing was written (the folders this run made,
    ``created``, go again for a fresh run). Says so and how to go on; returns the
    checkpoint resumed from (None for a fresh run)."""
    import shutil

    name = signal.Signals(stop.signum).name
    if step_dir is None:
        for d in created:
            shutil.rmtree(d, ignore_errors=True)
    if hint is not None:  # a stage of a stages run: the run goes on from its plan
        speak(f"stopping on {name} before this stage's next update: nothing new written; continue with --resume {hint}")
    elif step_dir is None:
        speak(f"stopping on {name} before the first update: nothing written; start the run again to train")
    else:
        speak(f"stopping on {name} before the first update: {step_dir} unchanged; continue with --resume {run_dir}")
    return step_dir
