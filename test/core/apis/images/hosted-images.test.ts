import { expect } from 'chai';
import { HostedImages } from '../../../../core/apis/images/hosted-images';
import { hostInlineImages } from '../../../../core/apis/images/host-inline-images';
import { imageMimeType } from '../../../../core/apis/images/image-type';
import { openStore } from '../../../../core/store/open-store';
import type { StoreBackend } from '../../../../core/store/store-backend';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64');
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 ')]);

describe('hosted images: b64_json results kept and served at expiring, unguessable URLs', () => {
  let store: StoreBackend;
  let now = 1_000_000;
  const clock = { now: () => now };

  beforeEach(async () => {
    store = await openStore('memory://');
  });
  afterEach(() => store.close());

  it('names each image with 192 random bits and its type, and serves it until the TTL passes', async () => {
    const hosted = new HostedImages(store, clock, 60_000);
    const name = await hosted.put(PNG, 'image/png');
    expect(name).to.match(/^[A-Za-z0-9_-]{32}\.png$/);
    expect(await hosted.put(PNG, 'image/png')).to.not.equal(name);
    const image = await hosted.get(name);
    expect(image).to.deep.equal({ bytes: PNG, mimeType: 'image/png', expiresAt: now + 60_000 });
    now += 60_000;
    expect(await hosted.get(name)).to.equal(undefined);
  });

  it('knows nothing of a name with the wrong extension or shape', async () => {
    const hosted = new HostedImages(store, clock, 60_000);
    const name = await hosted.put(JPEG, 'image/jpeg');
    expect(await hosted.get(name.replace('.jpeg', '.png'))).to.equal(undefined);
    expect(await hosted.get('../secrets.png')).to.equal(undefined);
    expect(await hosted.get(name.slice(1))).to.equal(undefined);
  });

  it('replaces b64_json items with URLs when the client asked for url, adds URLs when it asked for nothing', async () => {
    const hosted = new HostedImages(store, clock, 60_000);
    const body = { created: 1, data: [{ b64_json: PNG.toString('base64'), revised_prompt: 'a cat' }, { url: 'https://elsewhere.test/x.png' }] };
    expect(await hostInlineImages(body, 'url', hosted, 'https://gw.test')).to.equal(true);
    expect(body.data[0]).to.have.keys('url', 'revised_prompt');
    expect(body.data[0].url).to.match(/^https:\/\/gw\.test\/v1\/images\/files\/[A-Za-z0-9_-]{32}\.png$/);
    expect(body.data[1]).to.deep.equal({ url: 'https://elsewhere.test/x.png' });

    const unset = { data: [{ b64_json: PNG.toString('base64') }] };
    expect(await hostInlineImages(unset, undefined, hosted, 'https://gw.test')).to.equal(true);
    expect(unset.data[0]).to.have.keys('url', 'b64_json');

    const asked = { data: [{ b64_json: 'AAAA' }] };
    expect(await hostInlineImages(asked, 'b64_json', hosted, 'https://gw.test')).to.equal(false);
    expect(asked).to.deep.equal({ data: [{ b64_json: 'AAAA' }] });
  });

  it('tells PNG, JPEG and WebP apart by their signature', () => {
    expect([imageMimeType(PNG), imageMimeType(JPEG), imageMimeType(WEBP), imageMimeType(Buffer.from('??'), 'webp'), imageMimeType(Buffer.from('??'))]).to.deep.equal([
      'image/png',
      'image/jpeg',
      'image/webp',
      'image/webp',
      'image/png',
    ]);
  });
});
