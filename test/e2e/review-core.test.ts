import { expect } from 'chai';
import OpenAI from 'openai';
import type { LogEntry } from '../../core/store/log-entry';
import { MemoryBackend } from '../../core/store/memory-backend';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { startGateway } from '../support/start-gateway';

const KEY = 'sk-client-review-core-1';

/** A real memory store whose log writes take a while (a busy Redis or SQLite file). */
class SlowLogStore extends MemoryBackend {
  override async appendLog(entry: LogEntry): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 100));
    return super.appendLog(entry);
  }
}

describe('review: core runtime defects', () => {
  let upstream: FakeOpenAI;
  before(async () => {
    upstream = await new FakeOpenAI().start();
  });
  after(() => upstream.stop());

  it('a drain (SIGTERM) waits for the last request to be logged before the gateway closes its store', async () => {
    const store = new SlowLogStore();
    const gw = await startGateway(
      {
        organizations: [{ id: 'acme' }],
        keys: [{ key: KEY, org: 'acme', id: 'k1' }],
        providers: [{ id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-provider-review-core' }],
        models: [{ name: 'm', provider: 'oai', price: { inputPerMTok: 1, outputPerMTok: 1 } }],
      },
      { store },
    );
    upstream.script = { kind: 'json', body: chatCompletion('hello') };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0].message.content).to.equal('hello');
    await gw.close();
    const page = await store.queryLogs({ limit: 10 });
    expect(page.data.map((e) => [e.keyId, e.model, e.status, e.outcome])).to.deep.equal([['k1', 'm', 200, 'ok']]);
  });

  it('an org admin cannot PATCH a key to the platform_admin role (and so reach other organisations)', async () => {
    const gw = await startGateway({
      adminKey: 'sk-admin-review-core',
      organizations: [{ id: 'acme' }, { id: 'globex' }],
      keys: [
        { key: 'sk-acme-admin-review', org: 'acme', id: 'acme-admin', role: 'admin' },
        { key: 'sk-globex-member-review', org: 'globex', id: 'globex-member' },
      ],
      providers: [{ id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-provider-review-core' }],
      models: [{ name: 'm', provider: 'oai' }],
    });
    try {
      const asAcme = { authorization: 'Bearer sk-acme-admin-review', 'content-type': 'application/json' };
      const created = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: asAcme, body: JSON.stringify({ name: 'acme-helper' }) });
      expect(created.status).to.equal(201);
      const { key: secret, id: helperId } = (await created.json()) as { key: string; id: string };

      const patched = await fetch(`${gw.url}/admin/v1/keys/${helperId}`, { method: 'PATCH', headers: asAcme, body: JSON.stringify({ role: 'platform_admin' }) });
      expect(patched.status).to.equal(400);
      expect(((await patched.json()) as { error: { param: string } }).error.param).to.equal('role');

      const keys = await fetch(`${gw.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${secret}` } });
      expect(keys.status).to.equal(403);
      const own = await fetch(`${gw.url}/admin/v1/keys`, { headers: asAcme });
      const ids = ((await own.json()) as { data: { id: string; role?: string }[] }).data.map((k) => [k.id, k.role ?? 'member']);
      expect(ids).to.deep.equal([['acme-admin', 'admin'], [helperId, 'member']]);
    } finally {
      await gw.close();
    }
  });
});
