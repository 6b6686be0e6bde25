/** A webhook receiver on loopback for the job notification tests: it records what it is sent and answers as scripted. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedPost {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
  readonly at: number;
}

/** An answer: a status and its headers; `hang` never answers. */
export type ScriptedAnswer = { status: number; headers?: Record<string, string> } | 'hang';

export interface WebhookReceiver {
  readonly url: string;
  readonly posts: ReceivedPost[];
  close(): Promise<void>;
}

/** Answers each POST with the next scripted answer, then 200 once the script is done. */
export async function startWebhookReceiver(script: ScriptedAnswer[] = []): Promise<WebhookReceiver> {
  const posts: ReceivedPost[] = [];
  const answers = [...script];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(body), at: Date.now() });
      const answer = answers.shift() ?? { status: 200 };
      if (answer === 'hang') return;
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.status < 300 ? '{"ok":true}' : '{"ok":false}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
