import http2 from "node:http2";

/** One series of a scrape. */
export interface Series {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parses the Prometheus text format (comments skipped). */
export function parseScrape(text: string): Series[] {
  const out: Series[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1] as string] = l[2] as string;
    }
    out.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

/**
 * The value of the series `name` whose labels include `labels`, 0 when
 * there is none (a counter never incremented); several matching series are summed.
 */
export function sampleOf(
  scrape: readonly Series[],
  name: string,
  labels: Record<string, string> = {},
): number {
  let sum = 0;
  for (const s of scrape) {
    if (s.name !== name) continue;
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

/** Every series as `name{k="v",...}` with sorted labels: what a label-set comparison needs. */
export function seriesKeys(scrape: readonly Series[]): Set<string> {
  return new Set(
    scrape.map((s) => {
      const labels = Object.entries(s.labels)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => `${k}="${v}"`);
      return `${s.name}{${labels.join(",")}}`;
    }),
  );
}

/** GETs `path` over HTTP/1.1 (fetch). */
export async function getH1(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; type: string }> {
  const res = await fetch(`${baseUrl}${path}`, { headers });
  return {
    status: res.status,
    body: await res.text(),
    type: res.headers.get("content-type") ?? "",
  };
}

/** GETs `path` over HTTP/2 with prior knowledge (h2c), as Prometheus can and Kubernetes does not. */
export function getH2(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.on("error", reject);
    const req = session.request({ ":method": "GET", ":path": path, ...headers });
    let status = 0;
    let type = "";
    let body = "";
    req.on("response", (h) => {
      status = Number(h[":status"]);
      type = String(h["content-type"] ?? "");
    });
    req.setEncoding("utf8");
    req.on("data", (d: string) => {
      body += d;
    });
    req.on("end", () => {
      session.close();
      resolve({ status, body, type });
    });
    req.on("error", reject);
    req.end();
  });
}
