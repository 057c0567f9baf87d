/**
 * Ready-to-paste configurations for agents that use the app's MCP endpoint, and what the
 * endpoint's state means in words. Pure; no DOM.
 */

import type { McpEndpointState } from '../ipc';

/** The server's name in the agent's configuration. */
export const SERVER_NAME = 'ipybox';

/** A shell command adding the endpoint to Claude Code (for the current project). */
export function claudeCodeCommand(url: string, token: string): string {
  return `claude mcp add --transport http ${SERVER_NAME} ${url} --header "Authorization: Bearer ${token}"`;
}

/** The same as a project's `.mcp.json` (Claude Code reads it from the project folder). */
export function claudeCodeJson(url: string, token: string): string {
  const config = { mcpServers: { [SERVER_NAME]: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } } } };
  return JSON.stringify(config, null, 2);
}

/**
 * Claude Desktop's `claude_desktop_config.json`: it starts local (stdio) servers, so the
 * `mcp-remote` bridge (Node.js) connects it to the endpoint. The token travels in the
 * environment, as mcp-remote recommends (arguments with spaces break on some systems).
 */
export function claudeDesktopJson(url: string, token: string): string {
  const config = {
    mcpServers: {
      [SERVER_NAME]: {
        command: 'npx',
        args: ['-y', 'mcp-remote', url, '--allow-http', '--header', 'Authorization:${IPYBOX_AUTH}'],
        env: { IPYBOX_AUTH: `Bearer ${token}` },
      },
    },
  };
  return JSON.stringify(config, null, 2);
}

/** The token with all but its last 4 characters hidden. */
export function maskToken(token: string): string {
  if (token.length <= 4) return '•'.repeat(token.length);
  return '•'.repeat(Math.min(token.length - 4, 12)) + token.slice(-4);
}

/**
 * What a change of the endpoint did, in words: what the backend says now, not what was asked
 * (the person may have cancelled the question, or serving may have failed).
 */
export function servingStatus(asked: boolean, newToken: boolean, state: McpEndpointState): string {
  if (state.enabled) return asked && newToken ? 'Serving with a new token.' : 'Serving.';
  if (!asked) return 'Stopped.';
  return state.error ? 'Not serving.' : 'Not serving: nothing was changed.';
}
