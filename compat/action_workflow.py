"""`make compat`: actionlint checks workflows, not action metadata. This turns the composite
action (action.yml) into the workflow a caller's job amounts to: its inputs as
`workflow_call` inputs, its steps as one job's steps, its outputs as job outputs, so actionlint
checks the steps' syntax, shells, expressions (`inputs.*`, `runner.*`, `github.*`) and the step
ids the outputs name. Usage: action_workflow.py ACTION_YML OUT_YML
"""
import sys

import yaml

action = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
assert action["runs"]["using"] == "composite", "action.yml is a composite action"
inputs = {}
for name, spec in action.get("inputs", {}).items():
    inputs[name] = {"type": "string", "required": bool(spec.get("required", False))}
    if "default" in spec:
        inputs[name]["default"] = spec["default"]
    inputs[name]["description"] = spec.get("description", "")
job = {
    "runs-on": "ubuntu-latest",
    "outputs": {k: v["value"] for k, v in action.get("outputs", {}).items()},
    "steps": action["runs"]["steps"],
}
workflow = {
    "name": f"action.yml as a workflow ({action['name']})",
    "on": {"workflow_call": {"inputs": inputs}},
    "jobs": {"action": job},
}
with open(sys.argv[2], "w", encoding="utf-8") as f:
    yaml.safe_dump(workflow, f, sort_keys=False, width=100)
