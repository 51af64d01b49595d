// Deploy: saves a deployment of an artifact version. Over an existing
// deployment of another version it asks first, and shows what changes:
// the version, the bindings and the tool description agents see on /mcp.
import type { Json as JsonT, SourceBindingPayload } from "../api/generated";
import { Action } from "../components/Action";
import { ErrorBox } from "../components/Json";
import { useLoad } from "../hooks";
import { toolDescription } from "../lib/toolDescription";
import { useSession } from "../session";

export function Deploy({ deploymentId, artifactId, version, bindings, onDone }: { deploymentId: string; artifactId: string; version: number; bindings: SourceBindingPayload[]; onDone: (id: string) => void }) {
  const { conn } = useSession();
  const params = { deployment: { id: deploymentId, artifact_id: artifactId, artifact_version: version, bindings: bindings as unknown as JsonT } };
  // What the deployment id names now, and both artifacts' descriptions.
  const change = useLoad(async () => {
    const existing = (await conn.api.deploymentsList()).deployments.find((d) => d.id === deploymentId);
    if (!existing || (existing.artifact_id === artifactId && existing.artifact_version === version)) return { existing };
    const [before, after, current] = await Promise.all([
      conn.api.artifactsInspect({ artifact_id: existing.artifact_id, version: existing.artifact_version }),
      conn.api.artifactsInspect({ artifact_id: artifactId, version }),
      conn.api.deploymentsInspect({ deployment_id: deploymentId }),
    ]);
    return { existing, before: toolDescription(deploymentId, before), after: toolDescription(deploymentId, after), bindingsBefore: current.bindings };
  }, [conn, deploymentId, artifactId, version]);
  if (change.error) return <ErrorBox error={change.error} />;
  if (!change.data) return <button type="button" disabled>Deploy</button>;
  const { existing, before, after, bindingsBefore } = change.data;
  if (!existing || before === undefined) return <Action method="workflow.deployments.save" params={params} scope="author" label="Deploy" onDone={(r) => onDone(r.deployment_id)} />;
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
