/** Helpers for the golden-file tests of the Messages translations (shared by both directions). */
import { readdirSync } from 'node:fs';
import { fixturePath, readFixture } from '../../support/fixtures';
import { SseFrame } from '../../../core/streaming/sse-frame';

/** Case names in a fixture folder that have a file ending in `suffix`, e.g. `.chat-request.json`. */
export function goldenCases(folder: string, suffix: string): string[] {
  return readdirSync(fixturePath(folder))
    .filter((name) => name.endsWith(suffix))
    .map((name) => name.slice(0, -suffix.length))
    .sort();
}

export interface WireFrame {
  event?: string;
  data: unknown;
}

/** A stream fixture (`[{event?, data}]`, data a JSON value or "[DONE]") as SseFrames off the wire. */
export function framesFromFixture(folder: string, file: string): SseFrame[] {
  return readFixture<WireFrame[]>(folder, file).map((f) =>
    SseFrame.fromRaw(typeof f.data === 'string' ? f.data : JSON.stringify(f.data), f.event),
  );
}

/** Frames as the client would read them: parsed back from their wire text. */
export function wireFrames(frames: SseFrame[]): WireFrame[] {
  return frames.map((frame) => {
    const wire = frame.toWire();
    const event = /^event: (.*)$/m.exec(wire)?.[1];
    const dataText = /^data: (.*)$/m.exec(wire)![1];
    const data = dataText === '[DONE]' ? dataText : JSON.parse(dataText);
    return event === undefined ? { data } : { event, data };
  });
}
