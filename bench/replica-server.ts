import { createServer } from 'node:http';
import { dispatch } from '../server/api/router';
import { sendResponse, toRequest } from '../tests/helpers/node-http';

// Child of bench/replica.ts: the management API's edge (the router Next's route handlers call) over
// node:http on PORT, on DATABASE_URL, with or without RETRIEVAL_DATABASE_URL. Without Next, so the
// benchmark needs no production build and measures the service and database part of a label move.

const port = Number(process.env.PORT);
const appUrl = process.env.APP_URL!;
const server = createServer((req, res) => {
  dispatch(toRequest(req, appUrl)).then(
    (response) => sendResponse(res, response),
    () => res.writeHead(500).end(),
  );
});
server.listen(port, '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
