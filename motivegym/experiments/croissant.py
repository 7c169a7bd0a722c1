"""Croissant 1.0 metadata (JSON-LD) for a sweep's ``results.csv`` (MLCommons Croissant format)."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path
from typing import Any

CROISSANT_CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "sc": "https://schema.org/",
    "dct": "http://purl.org/dc/terms/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileObject": "cr:fileObject",
    "format": "cr:format",
    "recordSet": "cr:recordSet",
    "source": "cr:source",
    "md5": "cr:md5",
}
CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
#: column → (schema.org data type, description)
COLUMN_TYPES: dict[str, tuple[str, str]] = {
    "env": ("sc:Text", "registered environment id"),
    "family": ("sc:Text", "environment family"),
    "mechanism": ("sc:Text", "mechanism class of the environment"),
    "tier": ("sc:Text", "Coopetition-Gym tier (TR-1 … TR-4) or empty"),
    "algo": ("sc:Text", "training algorithm"),
    "sharing": ("sc:Text", "parameter sharing: shared (one network, agent one-hot input) or separate (one per agent)"),
    "reward": ("sc:Text", "reward layer the run was trained on"),
    "seed": ("sc:Integer", "training seed"),
    "steps": ("sc:Integer", "env steps trained when this row was evaluated"),
    "budget": ("sc:Integer", "the run's whole training budget in env steps"),
    "status": ("sc:Text", "ok, or failed (the run could not be built; see error)"),
    "error": ("sc:Text", "why a failed run could not be built"),
    "n_agents": ("sc:Integer", "number of agents"),
    "eval_episodes": ("sc:Integer", "greedy evaluation episodes"),
    "eval_seed": ("sc:Integer", "seed of the evaluation episode keys, shared by every run and baseline of the sweep"),
    "welfare": ("sc:Float", "mean evaluation welfare, sum over agents and steps of payoffs"),
    "normalized_score": ("sc:Float", "(welfare - W_random)/(W_opt - W_random) with the env's dilemma-strength constants"),
    "gap_to_optimum_percent": ("sc:Float", "(welfare - W_opt)/|W_opt|*100 against the env's social optimum"),
    "random_welfare": ("sc:Float", "welfare of the uniform random policy on the same evaluation episodes"),
    "nash_welfare": ("sc:Float", "the env's equilibrium welfare (dilemma-strength data)"),
    "optimum_welfare": ("sc:Float", "the env's social-optimum welfare (dilemma-strength data)"),
    "optimum_is_estimate": ("sc:Boolean", "True where the optimum is the best known policy, not a proven optimum"),
    "payoff_returns": ("sc:Text", "JSON list: mean payoff return per agent"),
    "reward_returns": ("sc:Text", "JSON list: mean training-layer return per agent"),
    "total_reward": ("sc:Float", "sum over agents of the training-layer returns"),
    "training_reward": ("sc:Float", "mean episode reward (sum over agents) over the last 10% of updates before this row"),
    "training_welfare": ("sc:Float", "mean episode welfare over the last 10% of updates before this row"),
    "cooperation_rate": ("sc:Float", "mean cooperation per step (env-defined)"),
    "final_trust": ("sc:Float", "mean trust after the last step (empty/NaN without trust)"),
    "episode_length": ("sc:Float", "mean evaluation episode length"),
    "efficiency": ("sc:Float", "utilitarian efficiency: welfare per step (Perolat et al. 2017)"),
    "equality": ("sc:Float", "equality: 1 - Gini coefficient of the payoff returns (Perolat et al. 2017)"),
    "sustainability": ("sc:Float", "sustainability: mean time step of positive payoffs (Perolat et al. 2017)"),
    "peace": ("sc:Float", "peace: mean number of agents not tagged out per step (Perolat et al. 2017)"),
    "wall_s": ("sc:Float", "wall seconds per run (group time / runs in the group)"),
    "run_id": ("sc:Text", "the run's file name under runs/ (a digest of every setting that changes a result)"),
    "motivegym_version": ("sc:Text", "motivegym version"),
    "jax_version": ("sc:Text", "jax version"),
    "checkpoint": ("sc:Text", "the run's final policy (safetensors, docs/checkpoints.md) relative to the sweep directory; on the end-of-budget row"),
}


def croissant_metadata(results_csv: Path, name: str = "motivegym-sweep") -> dict[str, Any]:
    """The Croissant JSON-LD description of ``results_csv`` (one record set, one field per column)."""
    with open(results_csv, newline="") as handle:
        columns = next(csv.reader(handle))
    unknown = [c for c in columns if c not in COLUMN_TYPES]
    if unknown:
        raise ValueError(f"no Croissant type for columns {unknown}")
    file_id = results_csv.name
    return {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "name": name,
        "description": "Reward-type ablation sweep of motivegym environments: one row per training run and evaluation.",
        "conformsTo": CONFORMS_TO,
        "license": "https://opensource.org/licenses/MIT",
        "url": "https://github.com/motivegym/motivegym",
        "version": "1.0.0",
        "distribution": [
            {
                "@type": "cr:FileObject",
                "@id": file_id,
                "name": file_id,
                "contentUrl": file_id,
                "encodingFormat": "text/csv",
                "sha256": hashlib.sha256(results_csv.read_bytes()).hexdigest(),
            }
        ],
        "recordSet": [
            {
                "@type": "cr:RecordSet",
                "@id": "runs",
                "name": "runs",
                "field": [
                    {
                        "@type": "cr:Field",
                        "@id": f"runs/{column}",
                        "name": column,
                        "description": COLUMN_TYPES[column][1],
                        "dataType": COLUMN_TYPES[column][0],
                        "source": {"fileObject": {"@id": file_id}, "extract": {"column": column}},
                    }
                    for column in columns
                ],
            }
        ],
    }


def validate_croissant(metadata: dict[str, Any], base_dir: Path) -> list[str]:
    """Structural checks of Croissant 1.0 required properties; returns the problems (empty = valid)."""
    problems = []
    for key in ("@context", "@type", "name", "description", "conformsTo", "license", "url", "distribution", "recordSet"):
        if key not in metadata:
            problems.append(f"missing {key}")
    if metadata.get("@type") != "sc:Dataset":
        problems.append("@type must be sc:Dataset")
    if metadata.get("conformsTo") != CONFORMS_TO:
        problems.append(f"conformsTo must be {CONFORMS_TO}")
    files = {}
    for item in metadata.get("distribution", []):
        if item.get("@type") != "cr:FileObject" or not {"@id", "contentUrl", "encodingFormat", "sha256"} <= set(item):
            problems.append(f"bad FileObject {item.get('@id')}")
            continue
        path = base_dir / item["contentUrl"]
        if not path.exists():
            problems.append(f"missing file {path}")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != item["sha256"]:
            problems.append(f"sha256 mismatch for {path}")
        files[item["@id"]] = path
    for record_set in metadata.get("recordSet", []):
        for field in record_set.get("field", []):
            source = field.get("source", {})
            file_id = source.get("fileObject", {}).get("@id")
            if file_id not in files:
                problems.append(f"field {field.get('name')} references unknown file {file_id}")
                continue
            with open(files[file_id], newline="") as handle:
                header = next(csv.reader(handle))
            if source.get("extract", {}).get("column") not in header:
                problems.append(f"field {field.get('name')} extracts a column not in {file_id}")
            if not str(field.get("dataType", "")).startswith("sc:"):
                problems.append(f"field {field.get('name')} has no schema.org dataType")
    return problems
