/**
 * A realistic chat request of about 1 KB, as an assistant integration sends it: a system prompt, a few
 * turns of conversation, sampling parameters and a user id. The gateway parses and validates all of it.
 */
export function chatBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    messages: [
      {
        role: 'system',
        content:
          'You are a helpful assistant for an online bookshop. Answer questions about orders, delivery times and returns. Be concise, friendly and accurate; if you do not know, say so and offer to connect the customer with a person.',
      },
      { role: 'user', content: 'Hi! I ordered two books last Tuesday, order number 48213, and the tracking page still says "label created". Is that normal?' },
      {
        role: 'assistant',
        content:
          'Hello! Thanks for reaching out. A "label created" status usually means the parcel is packed and waiting for the carrier to scan it. That can take one to two working days.',
      },
      { role: 'user', content: 'OK. And if it has not moved by Friday, what can I do? I need one of them as a birthday present on Sunday.' },
    ],
    temperature: 0.3,
    top_p: 1,
    max_tokens: 256,
    user: 'customer-48213',
  });
}
