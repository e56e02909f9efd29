/**
 * The development mailer: every message becomes an `.eml` file in its folder, which is created on the first
 * message and again when it has been removed since.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileMailer } from '../src/mail/mailer';

const message = (n: number) => ({ from: 'Shop <shop@example.com>', to: 'buyer@example.com', subject: `Order ${n}`, text: `Hello ${n}`, messageId: `<m${n}@test>`, language: 'en' });

test('writes one .eml per message, also after its folder was removed', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'mailer-test-'));
  const dir = path.join(root, 'mail');
  const mailer = fileMailer(dir);
  try {
    await mailer.send(message(1));
    await mailer.send(message(2));
    expect(readdirSync(dir).filter((f) => f.endsWith('.eml'))).toHaveLength(2);
    rmSync(dir, { recursive: true });
    await mailer.send(message(3));
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/-m3test\.eml$/);
    const eml = readFileSync(path.join(dir, files[0]), 'utf8');
    expect(eml).toContain('Subject: Order 3');
    expect(eml).toContain('Message-ID: <m3@test>');
  } finally {
    mailer.close();
    rmSync(root, { recursive: true, force: true });
  }
});
