// Deploy: saves a deployment of an artifact version. Over an existing
// deployment of another version it asks first, and shows what changes:
// the version, the bindings and the tool description agents see on /mcp,
// as the server answers a dry run of the save (deployments.save dry_run).
import type { Json as JsonT, SourceBindingPayload } from "../api/generated";
import { Action } from "../components/Action";
import { ErrorBox } from "../components/Json";
import { useLoad } from "../hooks";
import { useSession } from "../session";

export function Deploy({ deploymentId, artifactId, version, bindings, onDone }: { deploymentId: string; artifactId: string; version: number; bindings: SourceBindingPayload[]; onDone: (id: string) => void }) {
  const { conn } = useSession();
  const params = { deployment: { id: deploymentId, artifact_id: artifactId, artifact_version: version, bindings: bindings as unknown as JsonT } };
  // What the deployment id names now, and what the save would change, as the server says it.
  const change = useLoad(async () => {
    const dry = (await conn.api.deploymentsSave({ ...params, dry_run: true })).change;
    const previous = dry?.previous ?? null;
    if (!dry || !previous || (previous.artifact_id === artifactId && previous.artifact_version === version)) return { previous: null };
    const current = await conn.api.deploymentsInspect({ deployment_id: deploymentId });
    return { previous, before: previous.tool_description, after: dry.next.tool_description, bindingsBefore: current.bindings };
  }, [conn, deploymentId, artifactId, version]);
  if (change.error) return <ErrorBox error={change.error} />;
  if (!change.data) return <button type="button" disabled>Deploy</button>;
  const { previous: existing, before, after, bindingsBefore } = change.data;
  if (!existing) return <Action method="workflow.deployments.save" params={params} scope="author" label="Deploy" onDone={(r) => onDone(r.deployment_id)} />;
  const show = (bs: SourceBindingPayload[]) => bs.map((b) => `${b.logical_source} → ${b.concrete_source}`).join(", ") || "none";
  return (
    <div className="confirm" role="group" aria-label="Deploy over an existing deployment">
      <p>
        <strong>{deploymentId}</strong> exists: deploying replaces what it runs, for every client, at once.
      </p>
      <table className="diff" aria-label="What changes">
        <thead>
          <tr>
            <th scope="col"></th>
            <th scope="col">now</th>
            <th scope="col">after the deploy</th>
          </tr>
        </thead>
        <tbody>
          <tr data-change="version">
            <th scope="row">artifact</th>
            <td>
              {existing.artifact_id} v{existing.artifact_version}
            </td>
            <td>
              {artifactId} v{version}
            </td>
          </tr>
          <tr data-change="bindings">
            <th scope="row">bindings</th>
            <td>{show(bindingsBefore ?? [])}</td>
            <td>{show(bindings)}</td>
          </tr>
          <tr data-change="description">
            <th scope="row">tool description agents see</th>
            <td className="wrap">{before}</td>
            <td className={`wrap ${before === after ? "" : "changed"}`}>{before === after ? "(unchanged)" : after}</td>
          </tr>
        </tbody>
      </table>
      <Action method="workflow.deployments.save" params={params} scope="author" label={`Deploy v${version} over v${existing.artifact_version}`} onDone={(r) => onDone(r.deployment_id)} />
    </div>
  );
}
