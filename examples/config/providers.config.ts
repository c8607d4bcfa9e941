import { defineConfig, env } from 'model-gateway';

export default defineConfig({
  organizations: [{ id: 'acme' }],
  keys: [{ key: env('ACME_KEY'), org: 'acme' }],
  providers: [
    // Azure OpenAI: the resource endpoint; `model` below is the deployment name
    { id: 'azure', type: 'azure-openai', baseUrl: 'https://my-resource.openai.azure.com', apiKey: env('AZURE_OPENAI_API_KEY'), apiVersion: '2024-10-21' },
    // the v1 API (no api-version) with an Entra ID token from the Azure CLI, fetched again before it expires
    { id: 'azure-entra', type: 'azure-openai', baseUrl: 'https://my-resource.openai.azure.com',
      entraTokenCommand: 'az account get-access-token --resource https://cognitiveservices.azure.com -o json' },
    // OpenAI-compatible vendors by name: the preset fills baseUrl and drops what the vendor refuses
    { id: 'groq', type: 'openai', preset: 'groq', apiKey: env('GROQ_API_KEY') },
    { id: 'mistral', type: 'openai', preset: 'mistral', apiKey: env('MISTRAL_API_KEY') },
    { id: 'ollama', type: 'openai', preset: 'ollama' },
    // Google's Gemini API with an API key (sent as x-goog-api-key)
    { id: 'google', type: 'gemini', apiKey: env('GEMINI_API_KEY') },
    // Vertex AI with a service-account key file's JSON (its token_uri is honoured); Gemini and Claude models
    { id: 'vertex', type: 'vertex-ai', project: 'my-project', location: 'us-east5', credentials: env('GOOGLE_SERVICE_ACCOUNT_JSON') },
    // Bedrock with static keys; leave them out to use AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE or an instance role
    { id: 'aws', type: 'bedrock', region: 'us-east-1', accessKeyId: env('AWS_ACCESS_KEY_ID'), secretAccessKey: env('AWS_SECRET_ACCESS_KEY') },
  ],
  models: [
    { name: 'gpt-4o', provider: 'azure', model: 'gpt-4o' },                   // priced from the bundled table
    { name: 'gpt-4o-entra', provider: 'azure-entra', model: 'my-gpt4o-deployment',
      price: { inputPerMTok: 2.5, outputPerMTok: 10, cacheReadPerMTok: 1.25 } }, // a deployment name the table cannot know
    { name: 'embed', provider: 'azure', model: 'text-embedding-3-small', kind: 'embedding' },
    { name: 'llama-groq', provider: 'groq', model: 'llama-3.3-70b-versatile', price: { inputPerMTok: 0.59, outputPerMTok: 0.79 } },
    { name: 'mistral-large', provider: 'mistral', model: 'mistral-large-latest', price: { inputPerMTok: 2, outputPerMTok: 6 } },
    { name: 'llama-local', provider: 'ollama', model: 'llama3.2' },
    { name: 'gemini-flash', provider: 'google', model: 'gemini-2.5-flash' },
    { name: 'gemini-embed', provider: 'google', model: 'gemini-embedding-001', kind: 'embedding' },
    { name: 'gemini-pro-vertex', provider: 'vertex', model: 'gemini-2.5-pro' },
    { name: 'claude-vertex', provider: 'vertex', model: 'claude-sonnet-4-5@20250929' },   // Claude on Vertex (rawPredict)
    { name: 'claude-on-aws', provider: 'aws', model: 'anthropic.claude-sonnet-4-5-20250929-v1:0' },
  ],
});
