const c0 = process.cpuUsage();
for (const m of process.argv.slice(2)) {
  const c = process.cpuUsage();
  await import(m);
  const d = process.cpuUsage(c);
  console.log(m.replace('/work/wt/clifast/',''), ((d.user + d.system) / 1000).toFixed(0));
}
const d = process.cpuUsage(c0);
console.log('total cpu after start', ((d.user + d.system) / 1000).toFixed(0), 'process', ((process.cpuUsage().user+process.cpuUsage().system)/1000).toFixed(0));
