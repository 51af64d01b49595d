import { useState } from "react";
import type { RunResult } from "../api/generated";
import { go } from "../session";
import { Action } from "./Action";

/**
 * RunAgain offers, on a finished run's page, a rerun (the same input, on
 * the version the run ran) and a fork from a chosen step (the steps
 * before it taken from the run's record, not called again). Each opens
 * the new run's page once it has started.
 */
export function RunAgain({ runId, steps }: { runId: string; steps: string[] }) {
  const [from, setFrom] = useState("");
  const step = from || steps[0] || "";
  const open = (r: RunResult) => r.run_id && go("runs", r.run_id);
  return (
    <>
      <Action method="workflow.runs.rerun" params={{ run_id: runId, wait: false }} scope="run" label="Rerun" onDone={open} />
      {steps.length > 0 && (
        <span className="fork">
          <label>
            fork from{" "}
            <select aria-label="Fork from step" value={step} onChange={(e) => setFrom(e.target.value)}>
              {steps.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>{" "}
          <Action method="workflow.runs.fork" params={{ run_id: runId, from_node: step, wait: false }} scope="run" label="Fork" onDone={open} />
        </span>
      )}
    </>
  );
}
