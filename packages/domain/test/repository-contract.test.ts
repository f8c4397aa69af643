import t from 'tap'
import { createInMemoryPorts, repositoryContract } from '@people-service/domain/testing'

for (const contractCase of repositoryContract) {
  t.test(`in memory: ${contractCase.name}`, async () => {
    await contractCase.run(createInMemoryPorts())
  })
}
