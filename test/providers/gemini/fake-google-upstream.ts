/**
 * A fake Google endpoint speaking the Gemini API and Vertex AI wire formats, with Google's auth rules:
 * the Gemini API wants the key in `x-goog-api-key` (a wrong one is Google's 400 API_KEY_INVALID), Vertex
 * a bearer token the fake token endpoint issued (else 401 UNAUTHENTICATED). Never a key in the URL.
 */
import { CloudUpstream, json, type Answer, type RecordedRequest } from '../cloud-upstream';

export function fakeGeminiApi(apiKey: string): CloudUpstream {
  return new CloudUpstream((request) => {
    if (request.path.includes('key=')) return json(googleError(400, 'the key travels in a header here', 'INVALID_ARGUMENT'), 400);
    if (request.headers['x-goog-api-key'] !== apiKey) {
      return json({ error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }] } }, 400);
    }
    return undefined;
  });
}

export function fakeVertex(validToken: (token: string) => boolean): CloudUpstream {
  return new CloudUpstream((request: RecordedRequest) => {
    const match = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''));
    if (!match || !validToken(match[1])) return json(googleError(401, 'Request had invalid authentication credentials.', 'UNAUTHENTICATED'), 401);
    return undefined;
  });
}

export function googleError(code: number, message: string, status: string, details: unknown[] = []): unknown {
  return { error: { code, message, status, details } };
}

export type { Answer };
