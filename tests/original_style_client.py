"""A client written the way the original DiscoveryWorld's agents are (our own code, not theirs).

Run it through `python -m discoverylab.compat tests/original_style_client.py --scenario NAME
--difficulty Normal --mode random|llm --numSteps N --out DIR`. It imports the original's modules
(`discoveryworld.DiscoveryWorldAPI`, `discoveryworld.ScenarioMaker`) and makes every call and
attribute access the original's RandomAgent and HypothesizerAgent make (docs/agents.md lists
them): the random mode picks actions as RandomAgent does, the llm mode asks an OpenAI-compatible
server (OPENAI_BASE_URL) for each action and for its knowledge as HypothesizerAgent does. It
writes DIR/summary.json for the test to check. Exit status 3: unknown scenario/difficulty pair,
4: the scenario did not load.
"""

import argparse
import copy
import json
import os
import random
import sys

from discoveryworld.DiscoveryWorldAPI import DiscoveryWorldAPI
from discoveryworld.ScenarioMaker import (
    SCENARIO_DIFFICULTY_OPTIONS,
    SCENARIO_INFOS,
    SCENARIO_NAMES,
    SCENARIOS,
    ScenarioMaker,
    getInternalScenarioName,
)


def visible_objects(observation):
    """Inventory and reachable objects by uuid (as the Hypothesizer describes its arguments)."""
    ui = observation["ui"]
    return {obj["uuid"]: obj for obj in ui["inventoryObjects"] + ui["accessibleEnvironmentObjects"]}


def random_step(api, rng, observation):
    if api.isAgentInDialog(agentIdx=0):
        options = list(observation["ui"]["dialog_box"]["dialogOptions"].keys())
        return api.performAgentAction(agentIdx=0, actionJSON={"chosen_dialog_option_int": int(rng.choice(options))})
    reachable = observation["ui"]["inventoryObjects"] + observation["ui"]["accessibleEnvironmentObjects"]
    known = api.listKnownActions(limited=False)
    name = rng.choice(sorted(known))
    action = {"action": name, "arg1": None, "arg2": None}
    for arg in known[name]["args"]:
        action[arg] = rng.choice(reachable)["uuid"]
    if name in ("MOVE_DIRECTION", "ROTATE_DIRECTION"):
        action["arg1"] = rng.choice(["north", "east", "south", "west"])
    elif name == "TELEPORT_TO_LOCATION":
        action["arg1"] = rng.choice(list(api.listTeleportLocationsDict().keys()))
    elif name == "DISCOVERY_FEED_GET_POST_BY_ID":
        action["arg1"] = rng.randint(1, 100)
    result = api.performAgentAction(agentIdx=0, actionJSON=action)
    assert set(result) >= {"errors", "success"}, result
    return result


def ask(client, model, text, images, usage):
    content = [{"type": "text", "text": text}] + [{"type": "image_url", "image_url": {"url": u}} for u in images]
    response = client.chat.completions.create(model=model, messages=[{"role": "user", "content": content}],
                                              max_tokens=800, temperature=0.1)
    usage["sent"] += response.usage.prompt_tokens
    usage["received"] += response.usage.completion_tokens
    reply = response.choices[0].message.content
    block = reply.split("```json", 1)[-1].split("```", 1)[0]
    try:
        return json.loads(block)
    except ValueError:
        return None


def llm_step(api, client, model, history, knowledge, usage, last_image):
    observation = api.getAgentObservation(agentIdx=0)
    shown = copy.deepcopy(observation)
    shown.pop("vision", None)
    ui = observation["ui"]
    if history:
        history[-1]["result_of_last_action"] = ui["lastActionMessage"]
        history[-1]["extended_action_message"] = ui["extended_action_message"]
    prompt = "Environment Observation (as JSON):\n```json\n" + json.dumps(shown, sort_keys=True) + "```\n"
    prompt += json.dumps(api.listKnownActions(limited=False), sort_keys=True) + "\n"
    prompt += api.additionalActionDescriptionString() + "\n"
    prompt += json.dumps(api.listTeleportLocationsDict(), sort_keys=True) + "\n"
    where = ui["agentLocation"]
    prompt += f"You face {where['faceDirection']}; you can move {where['directions_you_can_move']}.\n"
    if api.isAgentInDialog(agentIdx=0):
        prompt += "Dialog: " + json.dumps(shown["ui"]["dialog_box"], sort_keys=True) + "\n"
    image = observation["vision"]["base64_with_grid"]
    images = [last_image, image] if last_image else [image]
    action = ask(client, model, prompt, images, usage) or {"action": "ERROR: could not parse the reply"}
    action["step"] = len(history)
    objects = visible_objects(observation)
    for arg, desc in (("arg1", "arg1_desc"), ("arg2", "arg2_desc")):
        if action.get(arg) in objects:
            obj = objects[action[arg]]
            action[desc] = obj["name"] + ": " + obj["description"]
    result = api.performAgentAction(agentIdx=0, actionJSON=action)
    action["errors"] = result["errors"]
    api.tick()
    notes = ask(client, model, prompt + "\nPlease write down any measurements or hypotheses you learned.", [], usage)
    if notes and isinstance(notes.get("scientific_knowledge"), list):
        for note in notes["scientific_knowledge"]:
            note["step"] = ui["world_steps"]
        knowledge["scientific_knowledge"].extend(notes["scientific_knowledge"])
    history.append(action)
    return observation, result, api.getTaskScorecard()


def main():
    parser = argparse.ArgumentParser(description="An original-style DiscoveryWorld client.")
    parser.add_argument("--scenario", choices=SCENARIO_NAMES, required=True)
    parser.add_argument("--difficulty", choices=SCENARIO_DIFFICULTY_OPTIONS.values(), required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--numSteps", type=int, default=10)
    parser.add_argument("--threadId", type=int, default=1)
    parser.add_argument("--mode", choices=["random", "llm"], default="random")
    parser.add_argument("--model", default="scripted-model")
    parser.add_argument("--video", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    if getInternalScenarioName(args.scenario, args.difficulty) is None:
        print("Unknown scenario/difficulty: " + args.scenario + " / " + args.difficulty)
        sys.exit(3)
    info = SCENARIO_INFOS[args.scenario]
    assert args.difficulty in info["difficulty"] and [int(v) - 1 for v in info["variations"]][0] == 0
    assert isinstance(ScenarioMaker, type) and len(SCENARIOS) >= len(SCENARIO_NAMES)

    api = DiscoveryWorldAPI(threadID=args.threadId)
    if not api.loadScenario(scenarioName=args.scenario, difficultyStr=args.difficulty, randomSeed=args.seed, numUserAgents=1):
        sys.exit(4)
    suffix = "." + args.scenario + "-" + args.difficulty + "-s" + str(args.seed) + "-thread" + str(api.THREAD_ID)
    uis = api.ui
    print("Number of agents: " + str(len(uis)))
    first = uis[0]
    print(first, type(first), first.currentAgent)

    rng = random.Random(args.seed)
    successes, steps, usage, completed_early = 0, 0, {"sent": 0, "received": 0}, False
    history, knowledge, last_image = [], {"scientific_knowledge": []}, None
    client = None
    if args.mode == "llm":
        import openai

        key = None
        if os.path.exists("openai_key.txt"):
            with open("openai_key.txt") as file:
                key = file.read().strip()
        client = openai.AzureOpenAI(api_key=key) if openai.api_type == "azure" else openai.OpenAI(api_key=key)
    for step in range(args.numSteps):
        if client is None:
            observation = api.getAgentObservation(agentIdx=0)
            print("Task Score (normalized): " + str(api.getTaskScorecard()[0]["scoreNormalized"]))
            result = random_step(api, rng, observation)
            api.tick()
        else:
            observation, result, _card = llm_step(api, client, args.model, history, knowledge, usage, last_image)
            last_image = observation["vision"]["base64_with_grid"]
            if step % 10 == 0 and step > 0:
                merged = ask(client, args.model, "Here is your consolidated knowledge base: "
                             + json.dumps(knowledge), [], usage)
                if merged and isinstance(merged.get("scientific_knowledge"), list):
                    knowledge = {"scientific_knowledge": merged["scientific_knowledge"]}
        successes += bool(result.get("success"))
        steps = step + 1
        if client is not None and api.areTasksComplete():
            completed_early = True
            break

    card = api.getTaskScorecard()[0]
    summary = {
        "taskName": card["taskName"], "scoreNormalized": card["scoreNormalized"], "completed": card["completed"],
        "completedSuccessfully": card["completedSuccessfully"], "stepCounter": api.getStepCounter(),
        "steps": steps, "successes": successes, "usage": usage, "completedEarly": completed_early,
        "knowledge": len(knowledge["scientific_knowledge"]), "threadId": api.THREAD_ID,
    }
    os.makedirs(args.out, exist_ok=True)
    if args.video:
        summary["video"] = api.createAgentVideo(agentIdx=0, filenameOut=os.path.join(args.out, "video" + suffix + ".gif"))
    log_info = {"scenarioName": args.scenario, "difficulty": args.difficulty, "seed": args.seed, "numSteps": args.numSteps}
    try:
        api.world.exportWorldHistoryJSON(log_info, os.path.join(args.out, "world" + suffix + ".json"), None, None, None)
    except Exception as e:  # the original's scripts report and go on
        print("Error saving world history: " + str(e))
        summary["historyError"] = str(e)
    with open(os.path.join(args.out, "summary.json"), "w") as file:
        json.dump(summary, file, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
