/**
 * The Python side of the ALFWorld bridge, run with the user's interpreter (`env.alfworld_python`).
 * Protocol, one JSON object per line:
 *   → {"cmd":"reset","gamefile":ABS,"max_steps":N}   ← {"observation":S,"admissible":[S],"done":false,"won":false}
 *   → {"cmd":"step","action":S}                       ← {"observation":S,"admissible":[S],"done":B,"won":B,"reward":X}
 *   → {"cmd":"close"}                                 ← {"ok":true}
 * Failures answer {"error":S}; a missing install answers {"error":S,"missing":true} and exits 3.
 */
export const BRIDGE_PY = String.raw`
import json, sys

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

try:
    import textworld
    import textworld.gym
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
except Exception as e:
    send({"error": "cannot import alfworld/textworld: %s" % e, "missing": True})
    sys.exit(3)

env = None

def first(x):
    return x[0] if isinstance(x, (list, tuple)) else x

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        req = json.loads(line)
        cmd = req.get("cmd")
        if cmd == "reset":
            infos_req = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
            try:
                demangler = AlfredDemangler(shuffle=False)
            except TypeError:
                demangler = AlfredDemangler
            env_id = textworld.gym.register_games([req["gamefile"]], infos_req, batch_size=1, asynchronous=False,
                                                  max_episode_steps=int(req.get("max_steps", 50)),
                                                  wrappers=[demangler, AlfredInfos])
            env = textworld.gym.make(env_id)
            obs, infos = env.reset()
            send({"observation": first(obs), "admissible": list(first(infos["admissible_commands"])), "done": False, "won": False})
        elif cmd == "step":
            obs, scores, dones, infos = env.step([req["action"]])
            send({"observation": first(obs), "admissible": list(first(infos["admissible_commands"])),
                  "done": bool(first(dones)), "won": bool(first(infos["won"])), "reward": float(first(scores))})
        elif cmd == "close":
            if env is not None:
                env.close()
            send({"ok": True})
            break
        else:
            send({"error": "unknown cmd %r" % cmd})
    except Exception as e:
        send({"error": "%s: %s" % (type(e).__name__, e)})
`;
