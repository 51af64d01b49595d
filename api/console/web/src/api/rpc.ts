// The console's one WebSocket to /ws: JSON-RPC requests and their
// replies, the server's notifications, and reconnection. The token rides
// as the subprotocol mcpflow.bearer.<token> (browsers cannot set headers
// on a WebSocket); it is never put in a URL or shown.
import { WorkflowClient, type Method, type Methods, type Notifications } from "./generated";

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
  /** detail is the domain message inside a 5000 or -32602, else the message. */
  get detail(): string {
    const d = this.data as { message?: string } | undefined;
    return d && typeof d.message === "string" ? `${this.message}: ${d.message}` : this.message;
  }
}

export type ConnState = "connecting" | "open" | "closed";

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> };

const requestTimeoutMs = 60_000;
const maxBackoffMs = 10_000;

export class Connection {
  private ws?: WebSocket;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private listeners = new Map<string, Set<(params: never) => void>>();
  private stateListeners = new Set<(s: ConnState) => void>();
  private openListeners = new Set<() => void>();
  private backoff = 500;
  private retry?: ReturnType<typeof setTimeout>;
  private closedByUser = false;
  private everOpened = false;
  state: ConnState = "connecting";
  readonly api: WorkflowClient;

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {
    this.api = new WorkflowClient((method, params) => this.call(method, params));
  }

  /** open connects and resolves once the socket is open, or rejects if the first attempt fails. */
  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      let settled = false;
      this.dial(() => {
        if (!settled) {
          settled = true;
          resolve();
        }
      }, () => {
        if (!settled) {
          settled = true;
          reject(new Error("the server refused the connection: check the token"));
        }
      });
    });
  }

  private dial(onOpen: () => void, onFail: () => void) {
    this.setState("connecting");
    const protocols = this.token ? ["mcpflow", `mcpflow.bearer.${this.token}`] : ["mcpflow"];
    const ws = new WebSocket(this.url, protocols);
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.everOpened = true;
      this.backoff = 500;
      this.setState("open");
      onOpen();
      for (const l of this.openListeners) l();
    };
    ws.onmessage = (m) => this.receive(String(m.data));
    ws.onclose = () => {
      this.ws = undefined;
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(new RpcError(-32000, "the connection closed before the reply"));
        this.pending.delete(id);
      }
      this.setState("closed");
      if (!opened) onFail();
      if (this.closedByUser || !this.everOpened) return;
      this.retry = setTimeout(() => this.dial(() => undefined, () => undefined), this.backoff);
      this.backoff = Math.min(this.backoff * 2, maxBackoffMs);
    };
  }

  close() {
    this.closedByUser = true;
    clearTimeout(this.retry);
    this.ws?.close();
  }

  private setState(s: ConnState) {
    this.state = s;
    for (const l of this.stateListeners) l(s);
  }

  onState(l: (s: ConnState) => void): () => void {
    this.stateListeners.add(l);
    return () => this.stateListeners.delete(l);
  }

  /** onOpen runs l on every (re)connection, to subscribe again. */
  onOpen(l: () => void): () => void {
    this.openListeners.add(l);
    return () => this.openListeners.delete(l);
  }

  on<N extends keyof Notifications>(method: N, l: (params: Notifications[N]) => void): () => void {
    let set = this.listeners.get(method);
    if (!set) this.listeners.set(method, (set = new Set()));
    set.add(l as (params: never) => void);
    return () => set.delete(l as (params: never) => void);
  }

  call<M extends Method>(method: M, params: Methods[M]["params"]): Promise<Methods[M]["result"]> {
    return this.raw(method, params) as Promise<Methods[M]["result"]>;
  }

  /** raw sends any method, typed or not (the read-token test crafts one). */
  raw(method: string, params: unknown): Promise<unknown> {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return Promise.reject(new RpcError(-32000, "not connected to the server"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RpcError(-32002, `no reply to ${method} within ${requestTimeoutMs / 1000}s`));
      }, requestTimeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  private receive(text: string) {
    let msg: { id?: number | null; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (msg.method && (msg.id === undefined || msg.id === null)) {
      for (const l of this.listeners.get(msg.method) ?? []) (l as (p: unknown) => void)(msg.params);
      return;
    }
    if (typeof msg.id !== "number") return;
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.error) p.reject(new RpcError(msg.error.code, msg.error.message, msg.error.data));
    else p.resolve(msg.result);
  }
}

/** wsURL is the /ws of the page's own origin. */
export function wsURL(loc: Location = window.location): string {
  return `${loc.protocol === "https:" ? "wss:" : "ws:"}//${loc.host}/ws`;
}
