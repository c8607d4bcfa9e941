/**
 * The built-in plugins, one static import each: nothing scans the file system or node_modules.
 * test/core/plugins/builtins.test.ts fails when a folder of providers/, guardrails/ or plugins/ is missing here.
 */
import type { PluginDefinition } from './contracts';
import echo from '../../providers/echo';
import openai from '../../providers/openai';
import anthropic from '../../providers/anthropic';
import azureOpenAi from '../../providers/azure-openai';
import gemini from '../../providers/gemini';
import vertexAi from '../../providers/vertex-ai';
import bedrock from '../../providers/bedrock';
import piiMask from '../../guardrails/pii-mask';
import block from '../../guardrails/block';
import mcpStreamableHttp from '../../plugins/mcp-streamable-http';
import mcpDemo from '../../plugins/mcp-demo';

export const BUILTIN_PLUGINS: readonly PluginDefinition[] = [echo, openai, anthropic, azureOpenAi, gemini, vertexAi, bedrock, piiMask, block, mcpStreamableHttp, mcpDemo];
