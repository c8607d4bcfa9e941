import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CommandTokenSource, parseTokenOutput } from '../../../providers/azure-openai/entra-token';
import { createLogger } from '../../../core/observability/logger';

describe('azure-openai Entra ID token from a command', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(tmpdir(), 'entra-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the Azure CLI JSON (expires_on seconds, or expiresOn) and a bare JWT\'s exp', () => {
    expect(parseTokenOutput('{"accessToken":"tok","expires_on":1700003600,"expiresOn":"2023-11-14 23:13:20.000000"}\n')).to.deep.equal({ token: 'tok', expiresAt: 1_700_003_600_000 });
    const jwt = ['e30', Buffer.from(JSON.stringify({ exp: 1_700_000_900 })).toString('base64url'), 'sig'].join('.');
    expect(parseTokenOutput(`${jwt}\n`)).to.deep.equal({ token: jwt, expiresAt: 1_700_000_900_000 });
    expect(parseTokenOutput('opaque-token\n')).to.deep.equal({ token: 'opaque-token', expiresAt: undefined });
  });

  it('runs the command once while the token is fresh (concurrent callers share the run), again near its expiry', async () => {
    let now = 1_700_000_000_000;
    const runs = path.join(dir, 'runs');
    // each run appends a line and prints a token numbered by the count, valid for one hour
    const command = `echo run >> '${runs}'; printf '{"accessToken":"tok-%s","expires_on":"%s"}' "$(wc -l < '${runs}' | tr -d ' ')" "${Math.floor(now / 1000) + 3600}"`;
    const source = new CommandTokenSource(command, { now: () => now }, createLogger({ level: 'error', write: () => {} }));
    expect(await Promise.all([source.token(), source.token(), source.token()])).to.deep.equal(['tok-1', 'tok-1', 'tok-1']);
    now += 50 * 60_000;
    expect(await source.token()).to.equal('tok-1');
    // within five minutes of the expiry: fetched again
    now += 6 * 60_000;
    expect(await source.token()).to.equal('tok-2');
  });

  it('fails without repeating what the command printed on stderr', async () => {
    const lines: string[] = [];
    const source = new CommandTokenSource("echo 'secret-in-stderr-CANARY' >&2; exit 3", { now: () => 0 }, createLogger({ level: 'debug', write: (line) => lines.push(line) }));
    const err = await source.token().catch((e) => e);
    expect(err.message).to.equal('entraTokenCommand failed');
    expect(lines.join('\n')).to.include('"exitCode":3').and.not.include('CANARY');
  });
});
