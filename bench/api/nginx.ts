import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, waitForHttp } from './load.ts';

/**
 * nginx in the foreground on a loopback port with its own temporary config and prefix (the
 * system's nginx configuration is never read or touched), serving `root` as static files.
 * One worker process, like the API's one event loop.
 */
export async function startNginx(dir: string, root: string): Promise<{ port: number; stop: () => Promise<void> }> {
  const port = await freePort();
  for (const d of ['logs', 'spool']) mkdirSync(path.join(dir, d), { recursive: true });
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path ${dir}/spool/body;
  proxy_temp_path ${dir}/spool/proxy;
  fastcgi_temp_path ${dir}/spool/fastcgi;
  uwsgi_temp_path ${dir}/spool/uwsgi;
  scgi_temp_path ${dir}/spool/scgi;
  types { application/json json; }
  server {
    listen 127.0.0.1:${port};
    root ${root};
  }
}
`,
  );
  const child: ChildProcess = spawn('nginx', ['-p', dir, '-c', conf, '-e', 'stderr'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitForHttp(`http://127.0.0.1:${port}/missing.json`, 404);
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGQUIT');
      }),
  };
}
