/**
 * The topology's SMTP server (`smtp-server`): collects every message received. Unlike a test's SMTP peer it
 * outlives its clients being SIGKILLed mid-conversation: a connection reset by a killed instance is counted,
 * not thrown (smtp-server emits it as an `error` event, which would end the process).
 */
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A received message: parsed, with its envelope recipients. */
interface TopologyMail {
  parsed: ParsedMail;
  envelopeTo: string[];
}

/** A running SMTP server of the topology. */
export interface TopologySmtp {
  url: string;
  received: TopologyMail[];
  /** Connections that ended in an error (a client killed mid-conversation). */
  readonly connectionErrors: number;
  stop(): Promise<void>;
}

/**
 * Starts the server on 127.0.0.1:`port` (0 = any free port). Messages to a recipient whose address starts
 * with `stalled` are answered only `stallMs` after their end of DATA (default 60 s): a slow relay (content
 * filter, tarpit) for that recipient only.
 */
export async function startTopologySmtp(port: number, opts: { stallMs?: number } = {}): Promise<TopologySmtp> {
  const received: TopologyMail[] = [];
  let connectionErrors = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    socketTimeout: 5 * 60_000,
    onData(stream, session, callback) {
      const envelopeTo = session.envelope.rcptTo.map((r) => r.address);
      simpleParser(stream).then(
        (parsed) => {
          const accept = () => {
            received.push({ parsed, envelopeTo });
            callback();
          };
          if (envelopeTo.some((a) => a.startsWith('stalled'))) setTimeout(accept, opts.stallMs ?? 60_000);
          else accept();
        },
        (err: Error) => callback(err),
      );
    },
  });
  server.on('error', () => connectionErrors++);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${bound}`,
    received,
    get connectionErrors() {
      return connectionErrors;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
