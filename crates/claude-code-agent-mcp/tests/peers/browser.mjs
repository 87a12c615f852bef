// A browser for the OAuth tests: fetches the URL it is given, following
// redirects (to the client's loopback redirect URI), as a person who
// authorizes at once would. Usage: node browser.mjs <url>
const response = await fetch(process.argv[process.argv.length - 1]);
await response.text();
if (!response.ok) {
  console.error(`browser: ${response.status} from ${response.url}`);
  process.exit(1);
}
